"""One streamed answer as it arrives: deltas handed to the caller, pieces kept for the end.

Both clients read a stream in their own format (SSE lines for the native client, litellm's
chunk objects for `LiteLLMModel`) and feed the pieces here, so the caller sees the same
deltas from either: a `TextDelta` per text piece, a `ReasoningDelta` per piece of a reasoning
model's thinking; for a tool call, a `ToolCallDelta` with
its id and name when its first piece arrives, then one per argument piece. A tool call that
comes without an id gets one made up before its first delta, so the streamed id and the
final message's id are the same.

`delivered` says whether any delta reached the caller (a retry would show it twice), and
`handler_error` holds what the caller's own `on_chunk` raised (passed on unchanged, never
taken for a model failure).
"""

from __future__ import annotations

import time
from typing import Any

from agents.models._text import utf8_text
from agents.models._tool_arguments import parse_arguments
from agents.models._tool_call_ids import own_id
from agents.models.base import ChunkHandler, ReasoningDelta, TextDelta, ToolCallDelta
from network.history.messages import AssistantMessage, ToolCall


class StreamedAnswer:
    """The text and tool-call pieces of one streamed answer, and its finish reason."""

    __slots__ = (
        "calls",
        "delivered",
        "finish_reason",
        "handler_error",
        "on_chunk",
        "reasoning",
        "text",
    )

    def __init__(self, on_chunk: ChunkHandler | None) -> None:
        self.on_chunk = on_chunk
        self.delivered = False  # a delta reached the caller: retrying would repeat it
        self.handler_error: BaseException | None = None  # what on_chunk raised, if anything
        self.text: list[str] = []
        self.reasoning: list[str] = []  # a reasoning model's thinking, as it streamed
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument pieces]]
        self.finish_reason: str | None = None

    async def add_text(self, text: str) -> None:
        """A piece of the answer's text (empty pieces are dropped)."""
        if text:
            if not text.isascii():  # no lone surrogate reaches the caller or the message
                text = utf8_text(text)
            self.text.append(text)
            await self._emit(TextDelta(text))

    async def add_reasoning(self, text: str) -> None:
        """A piece of a reasoning model's thinking (empty pieces are dropped)."""
        if text:
            if not text.isascii():
                text = utf8_text(text)
            self.reasoning.append(text)
            await self._emit(ReasoningDelta(text))

    async def add_tool_piece(
        self, index: int, call_id: str | None, name: str | None, arguments: str
    ) -> None:
        """A piece of tool call `index`: its id and name come with its first piece."""
        call = self.calls.get(index)
        name = utf8_text(name) if name else name
        if call is None:
            call_id = own_id(call_id, [earlier[0] for earlier in self.calls.values()])
            call = self.calls[index] = [call_id, name or "", []]
            await self._emit(ToolCallDelta(index=index, id=call[0], name=call[1]))
        elif name and not call[1]:
            call[1] = name
        if arguments:
            if not arguments.isascii():  # an escaped one is parse_arguments' to mend
                arguments = utf8_text(arguments)
            call[2].append(arguments)
            await self._emit(ToolCallDelta(index=index, arguments=arguments))

    def message(self) -> AssistantMessage:
        """The whole answer: its text and its tool calls, in index order."""
        tool_calls = [
            ToolCall(c[0], c[1], parse_arguments("".join(c[2])))
            for _, c in sorted(self.calls.items())
        ]
        reasoning = "".join(self.reasoning) or None
        return AssistantMessage("".join(self.text) or None, tool_calls, reasoning=reasoning)

    def raw(
        self, content: str | None, first: dict[str, Any], usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        """A `chat.completion`-shaped dict of the answer (cheap, and JSON as it is).

        `first` holds the `id`, `created` and `model` of the stream's first chunk.
        """
        wire: dict[str, Any] = {"role": "assistant", "content": content}
        if self.reasoning:
            wire["reasoning_content"] = "".join(self.reasoning)
        if self.calls:
            wire["tool_calls"] = [
                {
                    "id": c[0],
                    "type": "function",
                    "function": {"name": c[1], "arguments": "".join(c[2])},
                }
                for _, c in sorted(self.calls.items())
            ]
        return {
            "id": first.get("id"),
            "object": "chat.completion",
            "created": first.get("created") or int(time.time()),
            "model": first.get("model"),
            "choices": [{"index": 0, "message": wire, "finish_reason": self.finish_reason}],
            "usage": usage,
        }

    async def _emit(self, chunk: TextDelta | ToolCallDelta | ReasoningDelta) -> None:
        if self.on_chunk is None:
            return
        self.delivered = True
        try:
            await self.on_chunk(chunk)
        except Exception as exc:
            self.handler_error = exc
            raise
