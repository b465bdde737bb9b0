"""Reading a Chat Completions SSE stream into a `StreamedAnswer`.

Each `data:` line is one `chat.completion.chunk`, parsed once; `data: [DONE]` ends the stream.
Text and tool-call pieces go to the `StreamedAnswer`, which hands them to the caller as
deltas in the same shape as the litellm path. Comment lines (`: ping`, servers'
keep-alives) are skipped. An error event (`event: error`, llama.cpp's `error: {...}` line, or
a chunk carrying an `error` object) is a `StreamFailed` with the server's message. Any other
line outside the protocol (a proxy's or a crashing server's plain text) is kept, its first 500
characters, in `said`: when the stream then ends without a finish reason, the error says what
the server said.

Lines are read as bytes, and each `data:` line is given to `json.loads` as it is: no decoding
or copying of a chunk before it is parsed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from agents.models._answer_size import AnswerTooLarge
from agents.models._failures import server_message
from agents.models._streamed_answer import StreamedAnswer
from agents.models._text import utf8_json

_SAID_LIMIT = 500  # characters of the server's stray words kept for an error


class StreamFailed(Exception):
    """The stream said it failed, or sent something that is not a chunk."""


class ChatStream:
    """Reads one streamed answer's lines into `answer`; keeps its usage and first chunk."""

    def __init__(self, answer: StreamedAnswer) -> None:
        self.answer = answer
        self.usage: dict[str, Any] | None = None
        self.first: dict[str, Any] = {}  # the first chunk: its id, created, model
        self.said: list[str] = []  # what the server sent that was not a chunk (bounded)

    async def consume(self, readline: Callable[[], Awaitable[bytes]], max_bytes: int) -> None:
        """Read every line of the stream, `readline()` giving b"" at its end (the caller
        closes the response); `AnswerTooLarge` once its lines pass `max_bytes` in all."""
        event = b""
        done = False
        read = 0
        while line := await readline():
            read += len(line)
            if read > max_bytes:
                raise AnswerTooLarge
            line = line.rstrip(b"\r\n")
            if done:
                continue  # read to the end, so the connection goes back to the pool
            if line.startswith(b"data:"):
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    continue
                try:
                    chunk = json.loads(data)
                except ValueError:
                    text = data[:200].decode("utf-8", "replace")
                    raise StreamFailed(
                        f"the stream sent a line that is not JSON: {text!r}"
                    ) from None
                if event == b"error" or (isinstance(chunk, dict) and chunk.get("error")):
                    raise StreamFailed(
                        f"the server reported an error mid-stream: {server_message(data)}"
                    )
                if isinstance(chunk, dict) and ("choices" in chunk or "usage" in chunk):
                    await self._chunk(chunk)
                else:  # JSON, but no chunk: a message of the server's own
                    self._note(data)
            elif not line:
                event = b""
            elif line.startswith(b"event:"):
                event = line[6:].strip()
            elif line.startswith(b"error:"):  # llama.cpp's server: `error: {...}`, no data:
                raise StreamFailed(
                    f"the server reported an error mid-stream: {server_message(line[6:])}"
                )
            elif not line.startswith(b":"):  # a comment (keep-alive ping) says nothing
                self._note(line)

    def _note(self, line: bytes) -> None:
        """Keep what the server said outside the protocol, for the error if no answer comes."""
        if sum(len(s) for s in self.said) < _SAID_LIMIT:
            self.said.append(line[:_SAID_LIMIT].decode("utf-8", "replace"))

    async def _chunk(self, chunk: dict[str, Any]) -> None:
        # What is kept of a chunk as it came (the raw answer, stored with the thread) has no
        # lone surrogate (`agents.models._text`); the deltas' text is mended piece by piece.
        if not self.first:
            self.first = utf8_json(chunk)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = utf8_json(usage)
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
        # Reasoning models' thoughts: vLLM and DeepSeek say `reasoning_content`, OpenRouter
        # and newer vLLM `reasoning`; llama.cpp's server either, by its --reasoning-format.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str):
            await self.answer.add_reasoning(reasoning)
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
