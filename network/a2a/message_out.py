"""What a task tells its client: progress while it runs, then its outcome.

While a run goes on, its events become `working` status updates, each carrying one agent
message (role agent):

- an agent's finished text message: a text part, `metadata.agent` naming the agent (and
  `metadata.subagentRunId` for a sub-agent's);
- a tool call with its result: a data part `{"toolCall": {"id", "name", "arguments",
  "result"}}`;
- a batch of state changes: a data part `{"stateDelta": [RFC 6902 operations]}`.

When it ends:

- `completed`: the artifact `output` (a text part with the final text, and a data part with
  the typed output when the last agent has an `output_type`) and the artifact `state` (a data
  part with the thread's state, `temp:` keys left out);
- `input-required`: a status message whose data part `{"interrupts": [{"id", "tool",
  "agent", "arguments", "message"}]}` lists the approvals the task waits on, answered by the
  next message of the task (`network.a2a.message_in`);
- `failed`: a status message with the library's error text, or `internal error (reference
  err_...)` for any other exception (`network.serving.screening`);
- `canceled`: the run was cancelled (`tasks/cancel`, or the server shutting down).

Text with no UTF-8 form (a lone surrogate a custom model or a tool handed the run) is sent
with U+FFFD in its place (`text_part`, `data_part`): protobuf refuses it, and the task failed.

The final status update of a `completed` or `input-required` task carries the run's token
usage in its `metadata.usage` (`inputTokens`, `outputTokens`, `totalTokens`): what an
`A2AModel` client counts against its own limits.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict
from pydantic_core import to_jsonable_python

from network.a2a.live import LiveTask
from network.ids import new_id
from network.run.events import (
    RunEvent,
    StateDelta,
    TextContent,
    TextEnded,
    TextStarted,
    ToolCallArgs,
    ToolCallStarted,
    ToolResult,
)
from network.utf8 import utf8_copy, utf8_text

MAX_ARGUMENT_CHARS = 100_000  # a tool call's arguments shown in its progress message


def text_part(text: str) -> Part:
    """A text part holding `text`; a lone surrogate in it (a custom model's answer may hold
    one, and protobuf takes UTF-8 text only) becomes U+FFFD (`network.utf8`), as the thread
    stores and the AG-UI stream write it, rather than failing the task."""
    try:
        return Part(text=text)
    except UnicodeEncodeError:
        return Part(text=utf8_text(text))


def data_part(value: Any) -> Part:
    """A data part holding `value` as JSON (a lone surrogate in it mended as `text_part`'s)."""
    data = to_jsonable_python(value)
    try:
        return Part(data=ParseDict(data, struct_pb2.Value()))
    except UnicodeEncodeError:
        return Part(data=ParseDict(utf8_copy(data), struct_pb2.Value()))


def agent_message(
    live: LiveTask, parts: list[Part], metadata: dict[str, Any] | None = None
) -> Message:
    """A message of the agent in `live`'s task."""
    message = Message(
        message_id=new_id("msg_"),
        role=Role.ROLE_AGENT,
        parts=parts,
        task_id=live.task.id,
        context_id=live.task.context_id,
    )
    if metadata:
        message.metadata.update(metadata)
    return message


def status(
    live: LiveTask,
    state: int,
    message: Message | None = None,
    metadata: dict[str, Any] | None = None,
) -> TaskStatusUpdateEvent:
    """A status update of `live`'s task, stamped now."""
    now = TaskStatus(state=state)  # type: ignore[arg-type]  # the enum's int
    now.timestamp.FromDatetime(datetime.datetime.now(datetime.UTC))
    if message is not None:
        now.message.CopyFrom(message)
    update = TaskStatusUpdateEvent(
        task_id=live.task.id, context_id=live.task.context_id, status=now
    )
    if metadata:
        update.metadata.update(metadata)
    return update


def usage_of(result: Any) -> dict[str, Any]:
    """The run's token usage, as the final status update's `metadata.usage` reports it (what
    an `A2AModel` client counts against its own limits)."""
    usage = result.usage
    return {
        "usage": {
            "inputTokens": usage.prompt_tokens,
            "outputTokens": usage.completion_tokens,
            "totalTokens": usage.total_tokens,
        }
    }


def artifact(live: LiveTask, artifact_id: str, parts: list[Part]) -> TaskArtifactUpdateEvent:
    """The artifact `artifact_id` of `live`'s task, whole."""
    return TaskArtifactUpdateEvent(
        task_id=live.task.id,
        context_id=live.task.context_id,
        artifact=Artifact(artifact_id=artifact_id, name=artifact_id, parts=parts),
        last_chunk=True,
    )


def outcome(live: LiveTask, result: Any) -> list[TaskStatusUpdateEvent | TaskArtifactUpdateEvent]:
    """The updates that end `live`'s task with `result` (a `RunResult`)."""
    if result.interrupts:
        waiting = [
            {
                "id": interrupt.id,
                "tool": interrupt.tool,
                "agent": interrupt.agent,
                "arguments": interrupt.arguments,
                "message": interrupt.message or None,
            }
            for interrupt in result.interrupts
        ]
        tools = ", ".join(f"{entry['tool']}" for entry in waiting)
        text = text_part(f"waiting for approval of {tools}")
        message = agent_message(live, [text, data_part({"interrupts": waiting})])
        return [status(live, TaskState.TASK_STATE_INPUT_REQUIRED, message, usage_of(result))]
    output_parts = [text_part(result.output or "")]
    results = result.state.results
    typed = getattr(results[-1], "output_value", None) if len(results) else None
    if typed is not None:
        output_parts.append(data_part(typed))
    return [
        artifact(live, "output", output_parts),
        artifact(live, "state", [data_part(result.state.snapshot())]),
        status(live, TaskState.TASK_STATE_COMPLETED, metadata=usage_of(result)),
    ]


def failed(live: LiveTask, text: str) -> TaskStatusUpdateEvent:
    """The update that ends `live`'s task as failed, telling `text`."""
    return status(live, TaskState.TASK_STATE_FAILED, agent_message(live, [text_part(text)]))


class Progress:
    """A run's sink of typed events (subscribe it as a `Listener`): its events as `working`
    status updates of `live`'s task."""

    def __init__(self, live: LiveTask) -> None:
        self.live = live
        self.texts: dict[str, list[str]] = {}
        self.speakers: dict[str, dict[str, Any]] = {}
        self.calls: dict[str, tuple[str, list[str]]] = {}

    async def __call__(self, event: RunEvent) -> None:
        if isinstance(event, TextStarted):
            self.texts[event.message_id] = []
            self.speakers[event.message_id] = _attribution(event, event.name)
        elif isinstance(event, TextContent):
            self.texts.setdefault(event.message_id, []).append(event.delta)
        elif isinstance(event, TextEnded):
            text = "".join(self.texts.pop(event.message_id, ()))
            who = self.speakers.pop(event.message_id, {})
            if text:
                self._say([text_part(text)], who)
        elif isinstance(event, ToolCallStarted):
            self.calls[event.call_id] = (event.name, [])
        elif isinstance(event, ToolCallArgs):
            call = self.calls.get(event.call_id)
            if call is not None:
                call[1].append(event.delta)
        elif isinstance(event, ToolResult):
            name, chunks = self.calls.pop(event.call_id, ("", []))
            shown = {
                "id": event.call_id,
                "name": name,
                "arguments": _arguments("".join(chunks)),
                "result": event.content,
            }
            self._say([data_part({"toolCall": shown})], _attribution(event, None))
        elif isinstance(event, StateDelta):
            self._say([data_part({"stateDelta": event.ops})], {})

    def _say(self, parts: list[Part], metadata: dict[str, Any]) -> None:
        message = agent_message(self.live, parts, metadata)
        self.live.publish(status(self.live, TaskState.TASK_STATE_WORKING, message))


def _attribution(event: RunEvent, agent: str | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if agent:
        found["agent"] = agent
    subagent = event.subagent_run_id
    if subagent:
        found["subagentRunId"] = subagent
    return found


def _arguments(text: str) -> Any:
    if len(text) > MAX_ARGUMENT_CHARS:
        return text[:MAX_ARGUMENT_CHARS] + "..."
    try:
        return json.loads(text) if text else {}
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit
        return text
