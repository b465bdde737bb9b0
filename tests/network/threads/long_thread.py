"""Building a long thread quickly, through the store API: one commit of many agent calls."""

from __future__ import annotations

from network.history.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from network.history.results import InferenceResult, ToolCallRecord
from network.threads import Commit, ResultRecord, ThreadStore


def calls(count: int, *, start: int = 0, result_text: str = "ok") -> Commit:
    """A commit of `count` agent calls, each a user message, one tool call and its result."""
    messages: list[object] = []
    records = []
    for n in range(start, start + count):
        messages.append(UserMessage(f"question {n}"))
        sent = len(messages)
        call = ToolCall(f"call_{n}", "lookup", {"n": n})
        output = AssistantMessage(None, [call], name="a")
        tool = ToolCallRecord(call.id, "lookup", {"n": n}, result_text, result_text)
        messages += [output, ToolMessage(call.id, result_text, "lookup")]
        result = InferenceResult("a", f"question {n}", [], [], [output], [tool], None)
        result.started_at = 1_000_000.0 + n
        records.append(ResultRecord(result, sent))
    return Commit(revision=0, messages=messages, results=records)


async def build_thread(
    store: ThreadStore, thread_id: str, count: int, *, result_text: str = "ok"
) -> None:
    """A thread of `count` agent calls (3 messages each) in one commit."""
    await store.create_thread(thread_id, app_name="chat")
    await store.append_results(thread_id, calls(count, result_text=result_text))
