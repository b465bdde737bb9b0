"""`OpenAIModel`: the Chat Completions protocol spoken directly over httpx.

For OpenAI and every server that speaks its protocol (vLLM, llama.cpp's server, Ollama's
OpenAI endpoint, OpenRouter, Groq, Together, DeepSeek, ...). It does what `LiteLLMModel` does
for those servers at a fraction of the CPU: no SDK request transform, the body assembled from
messages serialized once (`openai_body`), the answer parsed once.

Decisions written down here:

- Connections: one pooled `httpx.AsyncClient` per base URL and key (`http_pool`).
- Deadline: `timeout` seconds for a whole attempt, from connecting to the last byte of the
  stream (`anyio.fail_after`); a per-read timeout would let a server's keep-alive pings hold
  a stream open for ever.
- Retries: 408, 409, 429, 5xx and connection failures are retried `max_retries` times, after
  what the server's `retry-after-ms` / `retry-after` says (up to 60 s), else an exponential
  backoff from `retry_delay` with jitter; authentication and validation errors (other 4xx)
  never are, nor is a stream once a delta reached the caller.
- Keys: `api_key`, else the provider's usual environment variable (`OPENAI_API_KEY` for
  `openai/`, see `providers`). A provider that needs a key and has none fails at once with a
  `ModelError` saying which variable to set; a server given by `api_base` may have no key.
- Answers: one with neither text nor a tool call, or a stream that ends without a finish
  reason or reports an error, is a `ModelError` (`answer_check`), never an empty success.
- Usage: the server's figures when it sends them (streams ask with `stream_options`); else an
  estimate (4 characters a token) marked `Usage.estimated`.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from agents.models.answer_check import answer_problem
from agents.models.base import ChunkHandler, ModelRequest, ModelResponse
from agents.models.failures import Failure, http_failure, safe_url, transport_failure
from agents.models.http_pool import shared_client
from agents.models.openai_body import ToolsText, request_body
from agents.models.openai_stream import ChatStream, StreamFailed
from agents.models.providers import default_base_url, key_from_env, key_names, split_model
from agents.models.retry import retries_of, retry_after, wait_before_retry
from agents.models.tool_choice import REFUSAL_STATUS, forces_a_tool, relaxed
from agents.models.usage import estimated_usage, reported_usage
from network.errors import ConfigurationError, ModelError
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import Usage
from network.ids import new_id
from network.logger import get_logger
from network.run.retry_policy import RetryPolicy


class _Failed(Exception):
    """One attempt failed in a way `complete` decides about (retry, relax, give up)."""

    def __init__(self, failure: Failure, headers: Any = None) -> None:
        super().__init__(failure.describe())
        self.failure = failure
        self.headers = headers


class OpenAIModel:
    """A model behind an OpenAI-compatible Chat Completions endpoint, called natively.

    Args:
        model: `"openai/<name>"`, `"<provider>/<name>"` or a bare name; the part after the
            first `/` is the model name sent.
        api_base: the server's base URL (e.g. `http://127.0.0.1:8000/v1`); default: the
            provider's public endpoint (`OPENAI_BASE_URL` overrides OpenAI's).
        api_key: the key; default: the provider's usual environment variable.
        timeout: seconds one attempt may take in all, stream included.
        max_retries: how many times a 408/409/429/5xx or connection failure is retried.
        retry: a `RetryPolicy` instead of `max_retries` / `retry_delay`: its `max_attempts`
            and waits (the same type as tools' `@tool(retry=...)`). The failures retried stay
            the transient ones above.
        stream: stream even when the caller passes no `on_chunk`.
        retry_delay: first backoff in seconds when the server sends no `retry-after`.
        **params: extra body fields (temperature, max_tokens, ...); a request's own `params`
            override them.
    """

    # How an agent's `output_type` reaches this model (`agents.output`): OpenAI and the
    # OpenAI-compatible servers (llama.cpp, vLLM, Ollama) take `response_format` with a schema.
    structured_output = "native"

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        stream: bool = False,
        retry_delay: float = 0.5,
        retry: RetryPolicy | None = None,
        **params: Any,
    ) -> None:
        self.name = model
        prefix, self.model_name = split_model(model)
        self._prefix = prefix
        base = api_base or default_base_url(prefix)
        if not base:
            raise ConfigurationError(
                f"model {model!r}: no api_base given and {prefix!r} has no default server"
            )
        self.api_base = base.rstrip("/")
        self.url = self.api_base + "/chat/completions"
        self.api_key = api_key
        # Only a provider's own public endpoint must have a key; a server named by api_base
        # (vLLM, llama.cpp, Ollama) usually runs without one.
        self._key_required = api_base is None
        self.timeout = timeout
        self.retry = retry
        self.max_retries = retries_of(retry, max_retries)
        self.stream = stream
        self.retry_delay = retry_delay
        self.params = params
        self._tools_text = ToolsText()
        self._relax_tool_choice = False  # set once the server refused a forced tool call

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, api_base={safe_url(self.api_base)!r})"

    @property
    def provider(self) -> str:
        """The provider prefix of the model name ("openai" when there is none), for traces."""
        return self._prefix

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """Ask the server; stream deltas to `on_chunk` when given; return the whole answer."""
        key = self.api_key or key_from_env(self._prefix)
        if key is None and self._key_required:
            names = " or ".join(key_names(self._prefix)) or "an API key variable"
            raise ModelError(
                f"model {self.name!r} at {safe_url(self.url)}: missing credentials: pass "
                f"api_key= or set {names}",
                model=self.name,
            )
        streaming = on_chunk is not None or self.stream
        relax = self._relax_tool_choice and forces_a_tool(request)
        attempt = 0
        while True:
            stream = ChatStream(on_chunk) if streaming else None
            try:
                with anyio.fail_after(self.timeout):
                    response = await self._attempt(
                        key, relaxed(request) if relax else request, stream
                    )
                response.tool_choice_relaxed = relax
                return response
            except _Failed as failed:
                failure, headers = failed.failure, failed.headers
                cause: BaseException = failed
            except TimeoutError as exc:
                if stream is not None and exc is stream.handler_error:
                    raise
                failure = Failure(
                    "timed out", f"no complete answer within {self.timeout:g} s", None, True
                )
                headers, cause = None, exc
            except Exception as exc:
                if stream is not None and exc is stream.handler_error:
                    raise  # the caller's own failure, unchanged
                failure = transport_failure(exc) or Failure(
                    "request failed", f"{type(exc).__name__}: {exc}"
                )
                headers, cause = None, exc
            delivered = stream is not None and stream.delivered
            if (
                not relax
                and not delivered
                and failure.status in REFUSAL_STATUS
                and forces_a_tool(request)
            ):
                relax = self._relax_tool_choice = True
                _log_relaxed(self.name, failure)
                continue
            if attempt >= self.max_retries or delivered or not failure.retryable:
                raise self._error(failure, attempt) from cause
            await anyio.sleep(
                wait_before_retry(self.retry, self.retry_delay, attempt, retry_after(headers))
            )
            attempt += 1

    async def _attempt(
        self, key: str | None, request: ModelRequest, stream: ChatStream | None
    ) -> ModelResponse:
        body = request_body(
            self.model_name, request, self.params, self._tools_text, stream=stream is not None
        )
        client = shared_client(self.api_base, key)
        if stream is None:
            reply = await client.post(self.url, content=body)
            if reply.status_code >= 400:
                raise _Failed(http_failure(reply.status_code, reply.content), reply.headers)
            return _parse(reply.content, len(body))
        async with client.stream("POST", self.url, content=body) as reply:
            if reply.status_code >= 400:
                await reply.aread()
                raise _Failed(http_failure(reply.status_code, reply.content), reply.headers)
            try:
                await stream.consume(reply.aiter_lines())
            except StreamFailed as exc:
                raise _Failed(Failure("stream failed", str(exc))) from exc
        return _streamed(stream, len(body))

    def _error(self, failure: Failure, attempt: int) -> ModelError:
        tries = f" after {attempt + 1} attempts" if attempt else ""
        return ModelError(
            f"model {self.name!r} at {safe_url(self.url)}: {failure.describe()}{tries}",
            model=self.name,
            status_code=failure.status,
        )


def _parse(content: bytes, body_size: int) -> ModelResponse:
    """A non-streamed answer, parsed once and checked."""
    try:
        data = json.loads(content)
        choice = data["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise _Failed(
            Failure("malformed response", f"not a chat completion: {content[:200]!r}")
        ) from exc
    text = message.get("content") if isinstance(message, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    tool_calls = [_tool_call(c) for c in calls or () if isinstance(c, dict)]
    assistant = AssistantMessage(text if isinstance(text, str) and text else None, tool_calls)
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    finish = finish if isinstance(finish, str) else None
    problem = answer_problem(assistant, finish, streamed=False)
    if problem is not None:
        raise _Failed(Failure("no answer", problem))
    usage = _usage(data.get("usage"), body_size, assistant)
    answered_by = data.get("model")
    return ModelResponse(
        assistant,
        usage,
        data,
        finish,
        model=answered_by if isinstance(answered_by, str) else None,
    )


def _streamed(stream: ChatStream, body_size: int) -> ModelResponse:
    tool_calls = [
        ToolCall(c[0], c[1], parse_arguments("".join(c[2])))
        for _, c in sorted(stream.calls.items())
    ]
    content = "".join(stream.text) or None
    message = AssistantMessage(content, tool_calls)
    problem = answer_problem(message, stream.finish_reason, streamed=True)
    if problem is not None:
        raise _Failed(Failure("no answer", problem))
    usage = _usage(stream.usage, body_size, message)
    raw = stream.raw(content)
    answered_by = raw.get("model")
    return ModelResponse(
        message,
        usage,
        raw,
        stream.finish_reason,
        model=answered_by if isinstance(answered_by, str) else None,
    )


def _tool_call(call: dict[str, Any]) -> ToolCall:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    call_id = call.get("id")
    name = function.get("name")
    return ToolCall(
        call_id if isinstance(call_id, str) and call_id else new_id("call_"),
        name if isinstance(name, str) else "",
        parse_arguments(function.get("arguments")),
    )


def parse_arguments(text: Any) -> Any:
    """A tool call's arguments as a dict; text that is not a JSON object stays as it came."""
    if not isinstance(text, str):
        return text if isinstance(text, dict) else {}
    if not text.strip():
        return {}  # a tool without parameters: some servers send ""
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def _usage(reported: Any, body_size: int, message: AssistantMessage) -> Usage:
    """The server's token counts, else an estimate marked as one."""
    return reported_usage(reported) or estimated_usage(body_size, message)


def _log_relaxed(model: str, failure: Failure) -> None:
    get_logger().warning(
        "model.tool_choice_relaxed",
        model=model,
        reason=failure.describe(),
        note="the server refused a forced tool_choice; sending tool_choice='auto' from now on",
    )
