"""A model answer that is no answer: caught on both clients instead of recorded as success.

A served model that fails after the HTTP headers went out can leave a stream that just stops,
or (through some clients) one empty chunk that claims `finish_reason="stop"`. Recording that as
an empty answer lets a run carry on with nothing, step after step. So an answer with neither
text nor a tool call, and a stream that ends without a finish reason, are errors.
"""

from __future__ import annotations

from network.history.messages import AssistantMessage


def answer_problem(
    message: AssistantMessage, finish_reason: str | None, *, streamed: bool
) -> str | None:
    """What is wrong with this answer, or None when it is a real one."""
    if streamed and finish_reason is None:
        return "the stream ended without a finish reason (the server stopped mid-answer)"
    if not message.content and not message.tool_calls:
        why = f" (finish_reason {finish_reason!r})" if finish_reason else ""
        return f"the answer has neither text nor a tool call{why}"
    return None
