"""A run tool call on a thread, through the serving layer (`network.serving`).

With `thread`, a call runs on that thread as the AG-UI server's runs do: the thread belongs to
the caller's principal (the server's `authorize` hook, given the HTTP request over Streamable
HTTP, None over stdio; another principal's call on it is refused as if it did not exist), one
run at a time (a second call while one runs is refused, `thread_busy`), its conversation and
state carry over from call to call (the input is appended as a user message, committed before
the run starts), `state` is the caller's writes over the thread's state (unprefixed and
`user:` keys only), and a run that stops on a tool waiting for a person answers with the
`interrupts` the thread now waits on. The next call answers every one of them with `answers`
(settled exactly once, by the store), or is refused (`interrupt_pending`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.history.messages import UserMessage
from network.ids import new_id
from network.mcp.arguments import RunArguments
from network.run.interrupts import Answer, restore_rejected
from network.serving.admission import RunRequest
from network.serving.approvals import pair_answers
from network.serving.client_writes import check_scopes
from network.serving.limits import check_thread_id
from network.serving.threads import ServedThreads
from network.telemetry.propagation import TraceParent, continue_remote


async def run_on_thread(
    served: ServedThreads,
    request: Any,
    arguments: RunArguments,
    sinks: Sequence[Any] = (),
    parent: TraceParent | None = None,
) -> tuple[Any, str]:
    """Run the call on its thread: the `RunResult` and the thread id, or the `RequestError`
    refusing it (nothing applied), or the run's own exception. `sinks` watch the run;
    `parent`: the caller's span, which the run's trace continues."""
    thread_id = check_thread_id(arguments.thread, "thread")
    principal = await served.principal(request, thread_id)
    admission = await served.admit(thread_id, new_id("run_"), principal)
    try:
        answers = [
            Answer(interrupt_id=entry.interrupt, approved=entry.approved, reason=entry.reason)
            for entry in arguments.answers or ()
        ]
        record = admission.record
        answered = pair_answers(
            served.network, thread_id, record.interrupts, answers or None, field="answers"
        )
        writes = dict(arguments.state or {})
        check_scopes(writes)
        data = {**record.state, **writes}
        restore_rejected(data, answered)
        said = [UserMessage(content=arguments.input, id=new_id("msg_"))] if arguments.input else []
        ctx = await admission.start(RunRequest(messages=said, data=data, answered=answered))
        continue_remote(ctx, parent)
        return await admission.execute(ctx, sinks=sinks), thread_id
    finally:
        await admission.release()


def waiting(result: Any) -> list[dict[str, Any]]:
    """The approvals a run stopped on, as the client answers them."""
    return [
        {
            "id": interrupt.id,
            "tool": interrupt.tool,
            "arguments": interrupt.arguments,
            "message": interrupt.message or None,
        }
        for interrupt in result.interrupts
    ]
