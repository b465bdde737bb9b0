"""The serving layer: what every protocol server of a network needs, written once.

Principals and the `authorize` hook, thread ownership, admission (one run per thread: a busy
flag in memory, the store's run lease across processes, a run that lost its lease stopped;
at most `max_runs` runs at once on a server, `network.serving.capacity`),
body, id and state limits, what a client may write, exactly-once answers to approvals, and
error screening. The AG-UI server (`network.agui`) and the MCP server (`network.mcp`) are
routes and encoders on it; an A2A server can sit beside them with this layer alone. Nothing
here names a protocol's events or types. See docs/serving.md.

    threads = ServedThreads(network, authorize=authorize, store="threads.db")
    principal = await threads.principal(request, thread_id)
    admission = await threads.admit(thread_id, run_id, principal)
    try:
        ctx = await admission.start(RunRequest(messages=..., data=..., answered=...))
        result = await admission.execute(ctx, sinks=[encoder])
    finally:
        await admission.release()
"""

from network.serving.admission import Admission, RunRequest
from network.serving.approvals import pair_answers, settle
from network.serving.capacity import RunSlots, Slot
from network.serving.client_writes import check_scopes
from network.serving.content_type import check_content_type
from network.serving.errors import RequestError
from network.serving.lease import HeldLease
from network.serving.limits import check_run_id, check_thread_id, list_limit, read_body
from network.serving.principals import Authorize, Forbidden, Unauthorized, principal_of
from network.serving.registry import ThreadRecord, ThreadRegistry
from network.serving.screening import guarded, screened
from network.serving.threads import ServedThreads, ThreadHeader, ThreadView

__all__ = [
    "Admission",
    "Authorize",
    "Forbidden",
    "HeldLease",
    "RequestError",
    "RunRequest",
    "RunSlots",
    "ServedThreads",
    "Slot",
    "ThreadHeader",
    "ThreadRecord",
    "ThreadRegistry",
    "ThreadView",
    "Unauthorized",
    "check_content_type",
    "check_run_id",
    "check_scopes",
    "check_thread_id",
    "guarded",
    "list_limit",
    "pair_answers",
    "principal_of",
    "read_body",
    "screened",
    "settle",
]
