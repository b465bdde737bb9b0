"""Reading a Chat Completions SSE stream into a `StreamedAnswer`.

Each `data:` line is one `chat.completion.chunk`, parsed once; `data: [DONE]` ends the stream.
Text and tool-call pieces go to the `StreamedAnswer`, which hands them to the caller as
deltas in the same shape as the litellm path. Comment lines (`: ping`, servers'
keep-alives) are skipped. An error event (`event: error`, or a chunk carrying an `error`
object) is a `StreamFailed` with the server's message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents.models.failures import server_message
from agents.models.streamed_answer import StreamedAnswer


class StreamFailed(Exception):
    """The stream said it failed, or sent something that is not a chunk."""


class ChatStream:
    """Reads one streamed answer's lines into `answer`; keeps its usage and first chunk."""

    def __init__(self, answer: StreamedAnswer) -> None:
        self.answer = answer
        self.usage: dict[str, Any] | None = None
        self.first: dict[str, Any] = {}  # the first chunk: its id, created, model

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
        if not self.first:
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
            self.answer.finish_reason = finish
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        content = delta.get("content")
        if isinstance(content, str):
            await self.answer.add_text(content)
        pieces = delta.get("tool_calls")
        if isinstance(pieces, list):
            for piece in pieces:
                if isinstance(piece, dict):
                    await self._tool_piece(piece)

    async def _tool_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        function = piece.get("function")
        function = function if isinstance(function, dict) else {}
        call_id, name = piece.get("id"), function.get("name")
        arguments = function.get("arguments")
        await self.answer.add_tool_piece(
            index if isinstance(index, int) else 0,
            call_id if isinstance(call_id, str) else None,
            name if isinstance(name, str) else None,
            arguments if isinstance(arguments, str) else "",
        )
