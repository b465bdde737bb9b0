"""Reading a Chat Completions SSE stream: deltas to the caller as they come, then the answer.

Each `data:` line is one `chat.completion.chunk`, parsed once; `data: [DONE]` ends the stream.
Text pieces become `TextDelta`s; a tool call's first piece becomes a `ToolCallDelta` with its
id and name, then one per argument piece, exactly as the litellm path hands them over, so
streaming consumers (AG-UI events, predictive state) see the same thing on both clients.
Comment lines (`: ping`, servers' keep-alives) are skipped. An error event (`event: error`, or
a chunk carrying an `error` object) is a `StreamFailed` with the server's message.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from agents.models.base import ChunkHandler, TextDelta, ToolCallDelta
from agents.models.failures import server_message
from network.ids import new_id


class StreamFailed(Exception):
    """The stream said it failed, or sent something that is not a chunk."""


class ChatStream:
    """Consumes one streamed answer; `delivered` says whether the caller saw any of it."""

    def __init__(self, on_chunk: ChunkHandler | None) -> None:
        self.on_chunk = on_chunk
        self.delivered = False  # a delta reached the caller: retrying would repeat it
        self.handler_error: BaseException | None = None  # what on_chunk raised, if anything
        self.text: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument pieces]]
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.first: dict[str, Any] | None = None

    async def consume(self, lines: AsyncIterator[str]) -> None:
        """Read every line of the stream (the caller closes the response)."""
        event = ""
        done = False
        async for line in lines:
            if done:
                continue  # read to the end, so the connection goes back to the pool
            if not line:
                event = ""
                continue
            if line.startswith(":"):
                continue  # a comment: keep-alive pings
            if line.startswith("event:"):
                event = line[6:].strip()
                continue
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                continue
            try:
                chunk = json.loads(data)
            except ValueError:
                text = data[:200]
                raise StreamFailed(f"the stream sent a line that is not JSON: {text!r}") from None
            if event == "error" or (isinstance(chunk, dict) and chunk.get("error")):
                raise StreamFailed(
                    f"the server reported an error mid-stream: {server_message(data)}"
                )
            if isinstance(chunk, dict):
                await self._chunk(chunk)

    async def _chunk(self, chunk: dict[str, Any]) -> None:
        if self.first is None:
            self.first = chunk
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        choices = chunk.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self.finish_reason = finish
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            await self._emit(TextDelta(content))
        pieces = delta.get("tool_calls")
        if isinstance(pieces, list):
            for piece in pieces:
                if isinstance(piece, dict):
                    await self._tool_piece(piece)

    async def _tool_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        index = index if isinstance(index, int) else 0
        function = piece.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name")
        name = name if isinstance(name, str) else None
        arguments = function.get("arguments")
        arguments = arguments if isinstance(arguments, str) else ""
        call = self.calls.get(index)
        if call is None:
            # A server that sends no id gets one made up here, before the first delta, so the
            # streamed id and the final message's id are the same.
            call_id = piece.get("id")
            call_id = call_id if isinstance(call_id, str) and call_id else new_id("call_")
            call = self.calls[index] = [call_id, name or "", []]
            await self._emit(ToolCallDelta(index=index, id=call[0], name=call[1]))
        elif name and not call[1]:
            call[1] = name
        if arguments:
            call[2].append(arguments)
            await self._emit(ToolCallDelta(index=index, arguments=arguments))

    async def _emit(self, chunk: TextDelta | ToolCallDelta) -> None:
        if self.on_chunk is None:
            return
        self.delivered = True
        try:
            await self.on_chunk(chunk)
        except Exception as exc:
            self.handler_error = exc
            raise

    def raw(self, content: str | None) -> dict[str, Any]:
        """A `chat.completion`-shaped dict of the streamed answer."""
        wire: dict[str, Any] = {"role": "assistant", "content": content}
        if self.calls:
            wire["tool_calls"] = [
                {
                    "id": c[0],
                    "type": "function",
                    "function": {"name": c[1], "arguments": "".join(c[2])},
                }
                for _, c in sorted(self.calls.items())
            ]
        first = self.first or {}
        return {
            "id": first.get("id"),
            "object": "chat.completion",
            "created": first.get("created") or int(time.time()),
            "model": first.get("model"),
            "choices": [{"index": 0, "message": wire, "finish_reason": self.finish_reason}],
            "usage": self.usage,
        }
