"""A small protocol built on the serving layer alone, the way an A2A server would sit beside
the AG-UI and MCP servers: a context id names the thread, each message is a task (a run), a
task waiting for a person is `input-required` and the next message of its context answers
it. Nothing of AG-UI or MCP is imported: if this works, the layer is enough.
"""

from __future__ import annotations

from typing import Any

from network.history.messages import UserMessage
from network.ids import new_id
from network.run.interrupts import Answer, InterruptError
from network.serving.admission import RunRequest
from network.serving.approvals import pair_answers
from network.serving.errors import RequestError
from network.serving.limits import check_thread_id
from network.serving.screening import screened
from network.serving.threads import ServedThreads


async def send(served: ServedThreads, request: Any, message: dict[str, Any]) -> dict[str, Any]:
    """One message: `{"contextId", "text"?, "answers"?: [{"interrupt", "approved"}]}`."""
    try:
        context_id = check_thread_id(message.get("contextId"), "contextId")
        principal = await served.principal(request, context_id)
        text = message.get("text")
        said = [UserMessage(content=text, id=new_id("msg_"))] if text else []
        # the request's messages, known before admission: a new thread on a store is created
        # holding them by the lease's claim (removed again if the request is refused)
        admission = await served.admit(context_id, new_id("task_"), principal, said)
    except RequestError as error:
        return {"status": error.status, **error.body()}
    try:
        try:
            answers = [
                Answer(interrupt_id=entry["interrupt"], approved=entry["approved"])
                for entry in message.get("answers", ())
            ]
        except InterruptError as bad:  # a field of the wrong type: `"approved": "yes"`
            raise RequestError(422, "invalid_resume", str(bad), key="answers") from None
        answered = pair_answers(
            served.network,
            context_id,
            admission.record.interrupts,
            answers or None,
            field="answers",
        )
        ctx = await admission.start(
            RunRequest(messages=said, data=dict(admission.record.state), answered=answered)
        )
        try:
            result = await admission.execute(ctx)
        except Exception as failure:
            told, code = screened(failure, logger="toy", event="toy.task_failed")
            return {"status": 200, "state": "failed", "error": {"code": code, "message": told}}
    except RequestError as error:
        return {"status": error.status, **error.body()}
    finally:
        await admission.release()
    return {
        "status": 200,
        "state": "input-required" if result.interrupts else "completed",
        "output": result.output,
        "interrupts": [{"id": i.id, "tool": i.tool} for i in result.interrupts],
    }
