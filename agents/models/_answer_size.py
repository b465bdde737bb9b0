"""How many bytes one model answer may take, for both clients (`OpenAIModel`, `LiteLLMModel`).

A server that goes on sending (within the call's timeout) must not fill the process's memory,
and an answer past the bound must not reach the caller or a thread store: it is a `ModelError`
"answer too large", never retried (the same server would send it again).
"""

from __future__ import annotations

from agents.models._failures import Failure

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The most bytes one answer may take on the wire, whole or streamed. 128k tokens of text
streamed a token a chunk take about 32 MiB of SSE."""

CHUNK_FRAME_BYTES = 32
"""The fewest bytes one streamed chunk takes on the wire besides its text
(`data: {"choices":[{"delta":{}}]}` and its blank line): where only parsed chunks are seen
(litellm), each counts this much plus its text, so a stream of empty chunks is bounded too."""


class AnswerTooLarge(Exception):
    """One answer passed `MAX_ANSWER_BYTES` (the client's `_failure` says `too_large`)."""


def too_large(limit: int) -> Failure:
    """The failure of an answer past `limit` bytes: not retryable."""
    return Failure("answer too large", f"the server sent more than {limit:,} bytes of answer")


def text_bytes(text: object) -> int:
    """The UTF-8 size of `text` when it is a string, else 0 (a lone surrogate counts 3)."""
    if not isinstance(text, str):
        return 0
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
