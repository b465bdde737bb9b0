"""`ListTasks`' `status` filter as the client sent it: a state A2A does not name is refused.

The SDK reads a request's enum fields with unknown values as unspecified (for forward
compatibility), so `ListTasks` with `"status": "RUNNING"` would list every task, as if no
filter were asked. A filter the client meant but the server cannot apply is invalid
params instead (JSON-RPC -32602, REST 400), naming the value and the states there are.
"""

from __future__ import annotations

from typing import Any

from a2a.types import InvalidParamsError, TaskState


async def check_status_filter(request: Any) -> None:
    """Refuse the `status` of a `ListTasks` request (JSON-RPC body or REST query) that
    names no task state; `request` is the Starlette request (None: nothing to check)."""
    if request is None:
        return
    if request.method == "GET":  # REST: GET <path>/v1/tasks?status=...
        sent: Any = request.query_params.get("status")
    else:  # JSON-RPC: the body the SDK's dispatcher read (Starlette keeps it)
        call = await request.json()
        params = call.get("params") if isinstance(call, dict) else None
        sent = params.get("status") if isinstance(params, dict) else None
    if sent is None or sent == "" or _is_state(sent):
        return
    shown = repr(sent) if len(repr(sent)) <= 80 else f"{repr(sent)[:77]}..."
    names = ", ".join(name for name in TaskState.keys() if name != "TASK_STATE_UNSPECIFIED")
    raise InvalidParamsError(message=f"status {shown} is not a task state (one of {names})")


def _is_state(sent: Any) -> bool:
    if isinstance(sent, str):
        if sent.isdigit():  # a query parameter's number
            sent = int(sent)
        else:
            return sent in TaskState.keys()
    return isinstance(sent, int) and not isinstance(sent, bool) and sent in TaskState.values()
