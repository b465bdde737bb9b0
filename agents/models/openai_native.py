"""`OpenAIModel`: the Chat Completions protocol spoken directly over aiohttp.

For OpenAI and every server that speaks its protocol (vLLM, llama.cpp's server, Ollama's
OpenAI endpoint, OpenRouter, Groq, Together, DeepSeek, ...). It does what `LiteLLMModel` does
for those servers at a fraction of the CPU: no SDK request transform, the body assembled from
messages serialized once (`openai_body`), the answer parsed once.

Decisions written down here:

- Connections: one pooled `aiohttp.ClientSession` per base URL and key and event loop
  (`http_pool`, which says why aiohttp). A cancelled call closes its connection (a half-read
  answer cannot be reused); a finished one goes back to the pool.
- Deadline, retries, `tool_choice` relaxing, the answer check and errors: shared with
  `LiteLLMModel` (`retrying`). A retry waits what the server's `retry-after-ms` /
  `retry-after` says; authentication and validation errors (other 4xx) are never retried.
- Keys: `api_key`, else the provider's usual environment variable (`OPENAI_API_KEY` for
  `openai/`, see `providers`). A provider that needs a key and has none fails at once with a
  `ModelError` saying which variable to set; a server given by `api_base` may have no key.
- Streams: read line by line (`openai_stream`); an error event in a stream is a `ModelError`
  with the server's message, and a stream that ends without a finish reason says what the
  server sent outside the protocol, if anything. A line longer than 8 MiB fails the stream
  (memory is bounded; a chunk is a few hundred bytes).
- Streaming: when the caller passes `on_chunk`; always with `stream=True`; never with
  `stream=False` (the answer then reaches the caller whole: over AG-UI, the text as one
  delta). llama.cpp's server, for one, refuses streamed requests that offer tools.
- Reasoning models: `reasoning_content` / `reasoning` (in a stream's deltas or an answer's
  message) is kept on `AssistantMessage.reasoning` and streamed as `ReasoningDelta`s; it is
  never sent back to the model. Its token count, when the server reports one
  (`completion_tokens_details.reasoning_tokens`), is `Usage.reasoning_tokens`.
- Usage: the server's figures when it sends them (streams ask with `stream_options`); else an
  estimate (4 characters a token) marked `Usage.estimated`.
- Cost (`ModelResponse.cost_usd`, what `UsageLimits(max_cost_usd=...)` counts): `price=` when
  given; else, for a provider's own endpoint (no `api_base`), litellm's offline price of the
  model, looked up once per model on its first answer (`price_map`); a server named by
  `api_base` is the user's own (llama.cpp, vLLM, a proxy) and is unpriced unless given one:
  litellm's price for the model name would be a guess about someone else's bill.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import Any
from urllib.parse import urlsplit

from agents.models._answer_size import MAX_ANSWER_BYTES, AnswerTooLarge, too_large
from agents.models._failures import Failure, http_failure, safe_url, transport_failure
from agents.models._http_pool import shared_client
from agents.models._openai_body import ToolsText, request_body
from agents.models._openai_stream import ChatStream, StreamFailed
from agents.models._price_map import price_of_async
from agents.models._providers import default_base_url, key_from_env, key_names, split_model
from agents.models._retry import retry_after
from agents.models._retrying import RetryingModel
from agents.models._streamed_answer import StreamedAnswer
from agents.models._text import may_spell_surrogates, utf8_json
from agents.models._tool_arguments import parse_arguments
from agents.models._tool_call_ids import own_id
from agents.models._usage import estimated_usage, reported_usage
from agents.models.base import ModelRequest, ModelResponse
from network.errors import ConfigurationError, ModelError
from network.history.messages import AssistantMessage, ToolCall

_MAX_LINE = 8 * 1024 * 1024  # bytes in one SSE line
_MAX_ERROR_BODY = 64 * 1024  # bytes of an error answer read for its message


class AttemptFailed(Exception):
    """One attempt failed: the server said no, or sent what is not an answer."""

    def __init__(self, failure: Failure, headers: Any = None) -> None:
        super().__init__(failure.describe())
        self.failure = failure
        self.headers = headers


class OpenAIModel(RetryingModel):
    """A model behind an OpenAI-compatible Chat Completions endpoint, called natively.

    Its `timeout`, `stream` and retry options are the ones every client takes (documented
    with `__init__`, below).

    Args:
        model: `"openai/<name>"`, `"<provider>/<name>"` or a bare name; the part after the
            first `/` is the model name sent.
        api_base: the server's base URL (e.g. `http://127.0.0.1:8000/v1`); default: the
            provider's public endpoint (`OPENAI_BASE_URL` overrides OpenAI's).
        api_key: the key; default: the provider's usual environment variable.
        price: the model's `Price` (USD per million tokens, or a mapping of its fields), e.g.
            `Price(input=0.15, output=0.60)`, or `Price.FREE` for a local server. Default:
            without `api_base`, the provider's price of the model in litellm's offline price
            map when litellm is installed (read from its JSON file, litellm not imported:
            `price_map`); with `api_base` (a server of your own), none. An unpriced request
            has `cost_usd` None.
        **params: extra body fields (temperature, max_tokens, ...); a request's own `params`
            override them.
    """

    api_base: str  # the server's, or the provider's default (`_configure`)

    @property
    def structured_output(self) -> str:
        """How an agent's `output_type` reaches this model (`agents.capabilities.output`): "native"
        (OpenAI, vLLM, llama.cpp's and Ollama's servers take `response_format` with a JSON
        schema), or "tool" once this server refused it (llama-cpp-python's does)."""
        return "tool" if self.refuses_response_format else "native"

    def _configure(self) -> None:
        model, api_base = self.name, self.api_base
        prefix, self.model_name = split_model(model)
        self._prefix = prefix
        base = api_base or default_base_url(prefix)
        if not base:
            raise ConfigurationError(
                f"model {model!r}: no api_base given and {prefix!r} has no default server"
            )
        parts = urlsplit(base)
        if parts.query or parts.fragment or base.endswith(("?", "#")):
            # `/chat/completions` is appended to it: after a query it joined the query, and
            # every request went to the base's own path.
            raise ConfigurationError(
                f"model {model!r}: api_base must be the server's base URL without a query or "
                f"fragment (e.g. http://127.0.0.1:8000/v1), got {safe_url(base)!r} with one"
            )
        self.api_base = base.rstrip("/")
        self.url = self.api_base + "/chat/completions"
        for key, value in self.params.items():  # sent in every body: JSON, or refused now
            try:
                json.dumps(value)
            except (TypeError, ValueError) as exc:  # a set, an object, a cycle
                raise ConfigurationError(
                    f"model {model!r}: parameter {key!r} cannot be sent in a JSON request body "
                    f"({exc})"
                ) from None
        # Only a provider's own public endpoint must have a key; a server named by api_base
        # (vLLM, llama.cpp, Ollama) usually runs without one.
        self._key_required = api_base is None
        self._tools_text = ToolsText()
        # Looked up in the price map on the first answer, unless given or served by api_base.
        self._price_pending = self.price is None and api_base is None

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, api_base={safe_url(self.api_base)!r})"

    @property
    def provider(self) -> str:
        """The provider prefix of the model name ("openai" when there is none), for traces."""
        return self._prefix

    async def _prepare(self) -> None:
        if self._key() is None and self._key_required:
            names = " or ".join(key_names(self._prefix)) or "an API key variable"
            raise ModelError(
                f"model {self.name!r} at {safe_url(self.url)}: missing credentials: pass "
                f"api_key= or set {names}",
                model=self.name,
            )

    def _key(self) -> str | None:
        return self.api_key or key_from_env(self._prefix)

    async def _send(self, request: ModelRequest, answer: StreamedAnswer | None) -> ModelResponse:
        body = request_body(
            self.model_name, request, self.params, self._tools_text, stream=answer is not None
        )
        session, proxy = await shared_client(self.api_base, self._key())
        async with session.post(self.url, data=body, proxy=proxy) as reply:
            if reply.status >= 400:  # an error body is read up to 64 KiB: its message is short
                content = await reply.content.read(_MAX_ERROR_BODY)
                raise AttemptFailed(http_failure(reply.status, content), reply.headers)
            if answer is None:
                size = reply.content_length  # most servers say it: read at once when it fits
                whole = await (
                    reply.read()
                    if size is not None and size <= MAX_ANSWER_BYTES
                    else _read_whole(reply.content)
                )
                return _parse(whole, len(body))
            stream = ChatStream(answer)
            try:
                await stream.consume(
                    functools.partial(reply.content.readline, max_line_length=_MAX_LINE),
                    MAX_ANSWER_BYTES,
                )
            except AnswerTooLarge:
                raise AttemptFailed(too_large(MAX_ANSWER_BYTES)) from None
            except StreamFailed as exc:
                raise AttemptFailed(Failure("stream failed", str(exc))) from exc
        if answer.finish_reason is None and stream.said:
            raise AttemptFailed(Failure("no answer", _unfinished(stream.said)))
        message = answer.message()
        usage = reported_usage(stream.usage) or estimated_usage(len(body), message)
        raw = answer.raw(message.content, stream.first, stream.usage)
        return ModelResponse(message, usage, raw, answer.finish_reason, model=_text(raw["model"]))

    def _failure(self, exc: Exception) -> Failure:
        if isinstance(exc, AttemptFailed):
            return exc.failure
        found = transport_failure(exc)
        if found is not None:
            return found
        aiohttp = sys.modules.get("aiohttp")  # loaded by http_pool before any request
        if aiohttp is not None:
            what = f"{type(exc).__name__}: {str(exc)[:300]}"
            if isinstance(exc, aiohttp.ClientError):  # e.g. a body cut short (ClientPayloadError)
                return Failure("connection failed", what, None, True)
            if isinstance(exc, aiohttp.http_exceptions.HttpProcessingError):  # not HTTP, or a
                return Failure("stream failed", what)  # line past _MAX_LINE (LineTooLong)
        return Failure("request failed", f"{type(exc).__name__}: {exc}")

    def _retry_after(self, exc: Exception) -> float | None:
        return retry_after(exc.headers) if isinstance(exc, AttemptFailed) else None

    async def _cost(self, response: ModelResponse) -> float | None:
        if self._price_pending:
            self.price = await price_of_async(self.name)
            self._price_pending = False
        return self.price.cost(response.usage) if self.price is not None else None

    def _url(self) -> str:
        return self.url


async def _read_whole(content: Any) -> bytes:
    """A whole answer's body, refused past `MAX_ANSWER_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in content.iter_chunked(1024 * 1024):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise AttemptFailed(too_large(MAX_ANSWER_BYTES))
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(content: bytes, body_size: int) -> ModelResponse:
    """A non-streamed answer, parsed once."""
    try:
        data = json.loads(content)
        if may_spell_surrogates(content):  # the raw answer is stored with the thread too
            data = utf8_json(data)
        choice = data["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise AttemptFailed(
            Failure("malformed response", f"not a chat completion: {content[:200]!r}")
        ) from exc
    if not isinstance(message, dict):
        message = {}
    text = message.get("content")
    calls = message.get("tool_calls")
    tool_calls: list[ToolCall] = []
    for call in calls or ():
        if isinstance(call, dict):
            tool_calls.append(_tool_call(call, [earlier.id for earlier in tool_calls]))
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    assistant = AssistantMessage(
        text if isinstance(text, str) and text else None,
        tool_calls,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
    )
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    usage = reported_usage(data.get("usage")) or estimated_usage(body_size, assistant)
    return ModelResponse(assistant, usage, data, _text(finish), model=_text(data.get("model")))


def _unfinished(said: list[str]) -> str:
    words = " / ".join(said)
    return (
        "the stream ended without a finish reason (the server stopped mid-answer); "
        f"the server said: {words}"
    )


def _tool_call(call: dict[str, Any], taken: list[str]) -> ToolCall:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    return ToolCall(
        own_id(call.get("id"), taken),
        _text(function.get("name")) or "",
        parse_arguments(function.get("arguments")),
    )


def _text(value: Any) -> str | None:
    """`value` when the server sent a string there, else None (its JSON is not trusted)."""
    return value if isinstance(value, str) else None
