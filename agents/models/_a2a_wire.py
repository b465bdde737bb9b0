"""What `A2AModel` reads from a remote A2A server: its events, checked as a stranger's.

Its bytes are bounded by `agents.models._a2a_transport`, its time by the model. `Answer`
folds the stream's events (a task, status updates, artifact updates, or a direct message),
or the task read again while a remote that does not stream works on it, into what the model
returns: the final text, the progress the server told on the way (streamed as reasoning),
the usage it reported, and how the task ended. What is not A2A is a `Malformed` error saying
what.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from network.history.results import MAX_TOKEN_COUNT, Usage

MAX_PROGRESS_CHARS = 20_000  # the progress kept on the answer (`AssistantMessage.reasoning`)
MAX_ERROR_CHARS = 500  # of a remote's failure message, in the error the model reads

# The states that end a task (A2A 1.0 `TaskState`, by name): the stream ends there.
COMPLETED = "TASK_STATE_COMPLETED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
FAILED = frozenset(
    {"TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED", "TASK_STATE_AUTH_REQUIRED"}
)


class Malformed(ValueError):
    """What a remote sent cannot be read as A2A (the text says what)."""


@dataclass
class Answer:
    """A remote task's events, folded: see the module docstring."""

    task_id: str = ""
    context_id: str = ""
    state: str = ""
    status_text: str = ""
    artifacts: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (text, rest)
    direct: str | None = None  # the text of a message the server answered with (no task)
    progress: list[str] = field(default_factory=list)
    usage: Usage | None = None
    asked: list[Any] = field(default_factory=list)  # the final status message's data parts
    kept: int = 0  # the characters of `progress` (with their line ends)
    last_told: str = ""  # the last progress text told

    @property
    def text(self) -> str:
        """The final text: the artifacts' text parts (in the order they came; their data and
        files when none has text), else the direct message's, else the final status
        message's."""
        texts = ["".join(text for text, _ in chunks) for chunks in self.artifacts.values()]
        if any(texts):
            return "\n".join(text for text in texts if text)
        rest = ["".join(other for _, other in chunks) for chunks in self.artifacts.values()]
        if any(rest):
            return "\n".join(other for other in rest if other)
        if self.direct is not None:
            return self.direct
        return self.status_text

    def take(self, event: Any) -> list[str]:
        """Fold one `StreamResponse` in; returns the progress texts it told (to stream)."""
        which = event.WhichOneof("payload")
        if which == "task":
            return self._task(event.task)
        if which == "status_update":
            update = event.status_update
            self._ids(update.task_id, update.context_id)
            self._usage(update.metadata)
            return self._status(update.status)
        if which == "artifact_update":
            update = event.artifact_update
            self._ids(update.task_id, update.context_id)
            self._usage(update.metadata)
            self._artifact(update.artifact, append=update.append)
            return []
        if which == "message":
            self._usage(event.message.metadata)
            self.direct = parts_text(event.message.parts)
            self.state = COMPLETED
            return []
        raise Malformed("an event that is neither a task, a message nor an update")

    def take_polled(self, task: Any) -> list[str]:
        """Fold in the task read again (`GetTask`, while a remote that does not stream works
        on it); returns its progress text when it changed since the last one told: a status
        read many times while the task works is told, and kept, once."""
        return self._task(task, polled=True)

    def _task(self, task: Any, *, polled: bool = False) -> list[str]:
        self._ids(task.id, task.context_id)
        self._usage(task.metadata)
        self.artifacts.clear()
        for artifact in task.artifacts:
            self._artifact(artifact, append=False)
        return self._status(task.status, polled=polled)

    def _status(self, status: Any, *, polled: bool = False) -> list[str]:
        self.state = _state_name(status.state)
        text = parts_text(status.message.parts) if status.HasField("message") else ""
        self._usage(status.message.metadata if status.HasField("message") else None)
        if self.state == "TASK_STATE_WORKING" or self.state == "TASK_STATE_SUBMITTED":
            if not text or (polled and text == self.last_told):
                return []
            self.last_told = text
            # Kept up to what the answer shows (its first `MAX_PROGRESS_CHARS`, then "..."):
            # a remote polled for long, a new status each time, holds no more than that.
            if self.kept <= MAX_PROGRESS_CHARS:
                self.progress.append(text)
                self.kept += len(text) + 1
            return [text]
        self.status_text = text
        self.asked = status_data(status.message.parts) if status.HasField("message") else []
        return []

    def _artifact(self, artifact: Any, *, append: bool) -> None:
        key = artifact.artifact_id or f"artifact-{len(self.artifacts)}"
        text = parts_text(artifact.parts, texts=True), parts_text(artifact.parts, texts=False)
        if append and key in self.artifacts:
            self.artifacts[key].append(text)
        else:
            self.artifacts[key] = [text]
        self._usage(artifact.metadata)

    def _ids(self, task_id: str, context_id: str) -> None:
        if task_id and self.task_id and task_id != self.task_id:
            raise Malformed(f"an update of another task ({_short(task_id)})")
        self.task_id = self.task_id or task_id
        self.context_id = self.context_id or context_id

    def _usage(self, metadata: Any) -> None:
        if metadata is None or "usage" not in metadata.fields:
            return
        from google.protobuf.json_format import MessageToDict  # noqa: PLC0415 (with a2a-sdk)

        self.usage = reported_usage(MessageToDict(metadata).get("usage"))


def reported_usage(value: Any) -> Usage:
    """The usage a remote reported (`metadata.usage`: `inputTokens`, `outputTokens`, and
    `totalTokens` when it says; snake_case or `prompt`/`completion` names read too)."""
    if not isinstance(value, dict):
        raise Malformed("a usage that is not an object")
    prompt = _count(value, "inputTokens", "input_tokens", "promptTokens", "prompt_tokens")
    completion = _count(
        value, "outputTokens", "output_tokens", "completionTokens", "completion_tokens"
    )
    total = _count(value, "totalTokens", "total_tokens")
    return Usage(prompt, completion, total or prompt + completion)


def _count(value: dict[str, Any], *names: str) -> int:
    for name in names:
        if name in value:
            found = value[name]
            # JSON numbers arrive as floats through protobuf's Struct.
            if isinstance(found, bool) or not isinstance(found, int | float):
                raise Malformed(f"a usage whose {name} is not a number")
            if not math.isfinite(found) or not 0 <= found <= MAX_TOKEN_COUNT or found != int(found):
                raise Malformed(f"a usage whose {name} is {found!r}")
            return int(found)
    return 0


def parts_text(parts: Any, *, texts: bool | None = None) -> str:
    """The text of a message's or an artifact's parts: text as it is, data as JSON, a file
    named (`texts=True`: only the text parts; False: only the others); a part holding nothing
    is malformed."""
    found: list[str] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind is None:
            raise Malformed("a part with no content")
        if texts is not None and (kind == "text") != texts:
            continue
        if kind == "text":
            found.append(part.text)
        elif kind == "data":
            from google.protobuf.json_format import MessageToDict  # noqa: PLC0415

            found.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
        else:
            shown = part.url if kind == "url" else f"{len(part.raw)} bytes"
            found.append(f"[file {part.filename or ''} {part.media_type or ''}: {shown}]")
    return "".join(found)


def status_data(parts: Any) -> list[Any]:
    """The data parts of a status message, as JSON data (what an `input-required` task asks
    with: `agent-network serve --a2a` sends `{"interrupts": [...]}`)."""
    from google.protobuf.json_format import MessageToDict  # noqa: PLC0415 (with a2a-sdk)

    return [MessageToDict(part.data) for part in parts if part.WhichOneof("content") == "data"]


def _state_name(state: int) -> str:
    from a2a.types import TaskState  # noqa: PLC0415

    try:
        return str(TaskState.Name(state))
    except ValueError as exc:
        raise Malformed(f"an unknown task state {state}") from exc


def _short(text: str) -> str:
    return text if len(text) <= 64 else text[:64] + "..."


def shortened(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """`text` cut to `limit` characters (a stranger's text in an error)."""
    return text if len(text) <= limit else text[:limit] + "..."
