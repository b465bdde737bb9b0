"""`LiteLLMModel`: any provider litellm supports, behind the `Model` protocol.

litellm is imported here only, on the first call (importing it takes seconds), in a worker
thread so a running event loop is not frozen meanwhile. `LITELLM_LOCAL_MODEL_COST_MAP` is set
first (unless the caller set it) so the import does not try to download litellm's cost map.
litellm's stdout banner on provider errors ("Give Feedback / Get Help") is switched off
(`litellm.suppress_debug_info`): a library must not print, and the error is raised anyway.

Decisions written down here:

- Retries are ours, not litellm's. litellm's `num_retries` only works through the openai SDK
  routes; elsewhere its retry wrapper needs the undeclared `tenacity` package and otherwise
  gives up silently (and when `tenacity` is present, both layers retry). So litellm is called
  with `num_retries=0` and `complete` retries 408, 409, 429, 5xx and connection errors itself,
  `max_retries` times, waiting what the provider's `retry-after-ms` / `retry-after` header
  says (up to 60 s), else an exponential backoff from `retry_delay` seconds with jitter. A
  stream is never retried once a chunk has reached the caller: the caller would see it twice.
- Errors: whatever litellm raises becomes a `ModelError` saying what happened (connection
  refused, timed out, HTTP status with the provider's message, authentication, missing
  credentials; `agents.models.failures`), naming the model and the URL without credentials,
  raised `from` the original. litellm reports a refused connection or missing credentials as
  "status 500"; the cause chain it keeps tells them apart, and missing credentials are never
  retried. An exception raised by the caller's `on_chunk` is not wrapped.
- Deadline: `timeout` also bounds the whole attempt, stream included (`anyio.fail_after`):
  litellm's own timeout applies per read, which a server's keep-alive pings keep resetting.
- No empty successes: an answer with neither text nor a tool call, or a stream that ended
  without the provider's finish reason (litellm makes one up; its stream wrapper records what
  the provider sent), is a `ModelError` (`agents.models.answer_check`). Through litellm's
  `hosted_vllm/` route the made-up finish reason cannot be told apart; a cut connection is
  still caught there as an empty answer or litellm's own error.
- Usage: when the provider sent none (llama.cpp's server when streaming), litellm's figure is
  its own count; it is replaced by the library's estimate, marked `Usage.estimated`.
- Streaming happens when the caller passes `on_chunk` or the model was made with
  `stream=True`; usage is asked for (`stream_options.include_usage`) where litellm says the
  provider supports it. The response is assembled from the chunks; its `raw` is a plain
  `chat.completion`-shaped dict built from them.
- Messages are converted to the wire format once each (`agents.models.wire`).
- For usage limits and traces each answer carries the model that answered, its cached prompt
  tokens, its price from litellm's offline map (`cost_usd`, None for a model not in it) and,
  when it was retried, a `ModelCall` per attempt (`ModelResponse.attempts`).
- The fast route: for an OpenAI-compatible server (vLLM, llama.cpp, a test server),
  `"hosted_vllm/<model>"` with `api_base` sends the same request through litellm's own HTTP
  client instead of the openai SDK, whose per-call request transform costs milliseconds of
  CPU that grow with the history. litellm's vLLM route drops `additionalProperties: false` and
  `strict` from tool schemas, in place; the tools are copied first so the agent's schemas are
  left alone. `openai/` keeps its meaning for real providers.
"""

from __future__ import annotations

import copy
import json
import os
import time
from typing import Any

import anyio

from agents.models.answer_check import answer_problem
from agents.models.base import ChunkHandler, ModelRequest, ModelResponse, TextDelta, ToolCallDelta
from agents.models.failures import (
    RETRY_STATUS,
    Failure,
    cause_chain,
    safe_url,
    transport_failure,
)
from agents.models.retry import retries_of, retry_after, wait_before_retry
from agents.models.tool_choice import REFUSAL_STATUS, forces_a_tool, relaxed
from agents.models.usage import estimated_usage, reported_usage
from agents.models.wire import to_wire_list
from network.errors import ModelError
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import ModelCall, Usage
from network.ids import new_id
from network.run.retry_policy import RetryPolicy

_litellm: Any = None


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm  # noqa: PLC0415 (litellm: seconds to import, only on first use)

    litellm.suppress_debug_info = True
    return litellm


def cost_usd(model: str, usage: Usage) -> float | None:
    """What `usage` of `model` costs in USD by litellm's offline price map; None when the
    model is not in it. Imports litellm on first use (the map ships with it: no download)."""
    global _litellm
    if _litellm is None:
        _litellm = _import_litellm()
    try:
        prompt, completion = _litellm.cost_per_token(
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cache_read_input_tokens=usage.cached_tokens,  # cheaper than uncached input
        )
    except Exception:  # litellm raises when the model has no price
        return None
    return float(prompt) + float(completion)


async def load_litellm() -> Any:
    """The litellm module, imported on first use (in a worker thread) and cached."""
    global _litellm
    if _litellm is None:
        _litellm = await anyio.to_thread.run_sync(_import_litellm)
    return _litellm


_UNSET: Any = object()


async def tokens_for(model: str) -> Any:
    """litellm's token count of one wire-format message for `model`, as a function; None when
    litellm has no entry for the model (its tokenizer would only be a guess)."""
    litellm = await load_litellm()
    try:
        litellm.get_model_info(model)
    except Exception:  # litellm raises a plain Exception for a model it does not map
        return None

    def count(message: dict[str, Any]) -> int:
        return int(litellm.token_counter(model=model, messages=[message]))

    return count


class LiteLLMModel:
    """A model served through `litellm.acompletion`.

    Args:
        model: a litellm model string, e.g. `"openai/gpt-4o-mini"`, `"anthropic/claude-..."`,
            or `"hosted_vllm/<name>"` for a self-hosted OpenAI-compatible server.
        api_base: the provider's base URL (e.g. `http://127.0.0.1:8000/v1`).
        api_key: the provider's key; litellm reads the provider's usual env var when None.
        timeout: seconds litellm waits for the provider (per attempt).
        max_retries: how many times a 408/409/429/5xx or connection failure is retried.
        retry: a `RetryPolicy` instead of `max_retries` / `retry_delay`: its `max_attempts`
            and waits (the same type as tools' `@tool(retry=...)`). The failures retried stay
            the transient ones above.
        stream: stream even when the caller passes no `on_chunk`.
        retry_delay: first backoff in seconds when the provider sends no `retry-after`.
        **params: extra `acompletion` arguments (temperature, max_tokens, ...); a request's
            own `params` override them.
    """

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
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.retry = retry
        self.max_retries = retries_of(retry, max_retries)
        self.stream = stream
        self.retry_delay = retry_delay
        self.params = params
        # The arguments every call shares, built once. num_retries=0 turns off both the openai
        # SDK's retries and litellm's wrapper retries: `complete` retries (module docstring).
        self._base: dict[str, Any] = {"model": model, "timeout": timeout, "num_retries": 0}
        if api_base is not None:
            self._base["api_base"] = api_base
        if api_key is not None:
            self._base["api_key"] = api_key
        self._base.update(params)
        self._provider: str | None = None
        self._stream_usage = False
        self._relax_tool_choice = False  # set once the server refused a forced tool call
        # id(tools list) -> (the list, kept alive so the id stays its own; its deep copy)
        self._tool_copies: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self._counter: Any = _UNSET

    async def token_counter(self) -> Any:
        """A function counting one wire message's tokens with this model's tokenizer, or None
        when litellm does not know the model (a context policy then estimates)."""
        if self._counter is _UNSET:
            self._counter = await tokens_for(self.name)
        return self._counter

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.name!r})"

    @property
    def provider(self) -> str | None:
        """litellm's provider of this model ("openai", "anthropic", ...), once known."""
        if self._provider:
            return self._provider
        return self.name.split("/", 1)[0] if "/" in self.name else None

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """Ask the provider; stream chunks to `on_chunk` when given; return the whole answer."""
        litellm = await load_litellm()
        if self._provider is None:
            self._inspect(litellm)
        streaming = on_chunk is not None or self.stream
        kwargs = self._arguments(request, streaming)
        relax = self._relax_tool_choice and forces_a_tool(request)
        if relax:
            kwargs = self._arguments(relaxed(request), streaming)
        attempt = 0
        failed: list[ModelCall] = []  # the attempts retried, for traces
        while True:
            stream = _Stream(on_chunk, kwargs["messages"])
            started_at, started = time.time(), time.perf_counter()
            try:
                # The deadline covers the whole attempt, stream included: litellm's own
                # timeout applies per read, and a server's keep-alive pings reset it.
                with anyio.fail_after(self.timeout):
                    response = await litellm.acompletion(**kwargs)
                    result = (
                        await stream.consume(response)
                        if streaming
                        else _parse(response, kwargs["messages"])
                    )
                problem = answer_problem(result.message, result.finish_reason, streamed=streaming)
                if problem is not None:
                    raise _NoAnswer(problem)
                result.tool_choice_relaxed = relax
                result.cost_usd = cost_usd(self.name, result.usage)
                if failed:
                    answered = self._attempt(request, started_at, started, None, result)
                    result.attempts = [*failed, answered]
                return result
            except Exception as exc:
                if exc is stream.handler_error:
                    raise  # the caller's own failure, unchanged
                failure = self._failure(exc)
                if (
                    not relax
                    and not stream.delivered
                    and failure.status in REFUSAL_STATUS
                    and forces_a_tool(request)
                ):
                    relax = self._relax_tool_choice = True
                    kwargs = self._arguments(relaxed(request), streaming)
                    failed.append(self._attempt(request, started_at, started, type(exc).__name__))
                    continue
                if attempt >= self.max_retries or stream.delivered or not failure.retryable:
                    raise self._error(failure, attempt) from exc
                failed.append(self._attempt(request, started_at, started, type(exc).__name__))
                await anyio.sleep(
                    wait_before_retry(self.retry, self.retry_delay, attempt, _retry_after(exc))
                )
                attempt += 1

    def _attempt(
        self,
        request: ModelRequest,
        started_at: float,
        started: float,
        error: str | None,
        answer: ModelResponse | None = None,
    ) -> ModelCall:
        took = (time.perf_counter() - started) * 1000
        if answer is None:
            return ModelCall(self.name, self.provider, None, started_at, took, error=error,
                             agent=request.agent)  # fmt: skip
        return ModelCall(
            self.name,
            self.provider,
            answer.model,
            started_at,
            took,
            answer.usage,
            answer.finish_reason,
            answer.cost_usd,
            None,
            request.agent,
        )

    async def structured_output(self) -> str:
        """How this model takes an `output_type` (`agents.output`): native, tool or prompted.

        "native" when litellm says the model supports a response schema, or when it has an
        `api_base` (llama.cpp, vLLM and Ollama all take `response_format` with a JSON schema);
        else "tool" when it supports function calling; else "prompted".
        """
        litellm = await load_litellm()
        if self._provider is None:
            self._inspect(litellm)
        provider = self._provider or None
        try:
            if litellm.supports_response_schema(model=self.name, custom_llm_provider=provider):
                return "native"
        except Exception:  # a model litellm does not know
            pass
        if self.api_base:
            return "native"
        try:
            if litellm.supports_function_calling(model=self.name, custom_llm_provider=provider):
                return "tool"
        except Exception:
            pass
        return "prompted"

    # -- request -------------------------------------------------------------------------

    def _inspect(self, litellm: Any) -> None:
        """Find the provider once: whether it takes stream_options, whether tools need a copy."""
        try:
            _, provider, _, _ = litellm.get_llm_provider(self.name, api_base=self.api_base)
            supported = litellm.get_supported_openai_params(
                model=self.name, custom_llm_provider=provider
            )
        except Exception:  # unknown to litellm: acompletion will say so, as a ModelError
            provider, supported = "", None
        self._provider = provider
        self._stream_usage = "stream_options" in (supported or ())

    def _arguments(self, request: ModelRequest, streaming: bool) -> dict[str, Any]:
        kwargs = dict(self._base)
        if streaming:
            kwargs["stream"] = True
            if self._stream_usage:
                kwargs["stream_options"] = {"include_usage": True}
        kwargs["messages"] = to_wire_list(request.system, request.history)
        if request.tools:
            kwargs["tools"] = self._tools(request.tools)
            choice = request.tool_choice
            if choice:
                kwargs["tool_choice"] = (
                    choice
                    if choice in ("auto", "required", "none")
                    else {"type": "function", "function": {"name": choice}}
                )
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        if request.params:
            kwargs.update(request.params)
        return kwargs

    def _tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self._provider != "hosted_vllm":
            return tools
        # litellm's vLLM route edits tool schemas in place; give it a copy, made once per list
        # (an agent's tool list lives as long as the agent, so few lists ever come by).
        cached = self._tool_copies.get(id(tools))
        if cached is None or cached[0] is not tools:
            if len(self._tool_copies) >= 256:
                self._tool_copies.clear()
            cached = self._tool_copies[id(tools)] = (tools, copy.deepcopy(tools))
        return cached[1]

    # -- failure -------------------------------------------------------------------------

    def _failure(self, exc: BaseException) -> Failure:
        """What went wrong, from litellm's exception and the chain of causes it keeps."""
        if isinstance(exc, _NoAnswer):
            return Failure("no answer", str(exc))
        if isinstance(exc, TimeoutError):  # our deadline
            return Failure("timed out", f"no complete answer within {self.timeout:g} s", 408, True)
        chain = cause_chain(exc)
        status = _status(exc)
        for link in chain:
            text = str(link)
            if "Missing credentials" in text or "api_key client option must be set" in text:
                return Failure("missing credentials", _first_line(text), None, False)
        if status in (401, 403) or any("Authentication" in type(c).__name__ for c in chain):
            return Failure(f"authentication failed (HTTP {status})", _first_line(str(exc)), status)
        network = transport_failure(exc)
        if network is not None:
            # litellm reports these as status 500; there was no HTTP answer at all.
            return network
        if status is not None:
            retryable = status in RETRY_STATUS or status >= 500
            return Failure(f"HTTP {status}", _first_line(str(exc)), status, retryable)
        return Failure("request failed", f"{type(exc).__name__}: {_first_line(str(exc))}")

    def _error(self, failure: Failure, attempt: int) -> ModelError:
        where = f" at {safe_url(self.api_base)}" if self.api_base else ""
        tries = f" after {attempt + 1} attempts" if attempt else ""
        return ModelError(
            f"model {self.name!r}{where}: {failure.describe()}{tries}",
            model=self.name,
            status_code=failure.status,
        )


class _NoAnswer(Exception):
    """litellm returned an answer that is no answer (`answer_check`)."""


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:500] if text.strip() else ""


class _Stream:
    """Consumes one litellm stream: forwards deltas, then assembles the whole response."""

    def __init__(self, on_chunk: ChunkHandler | None, messages: list[dict[str, Any]]) -> None:
        self.on_chunk = on_chunk
        self.messages = messages  # for a usage estimate when the server sends none
        self.delivered = False  # a chunk reached the caller: retrying would repeat it
        self.handler_error: BaseException | None = None  # what on_chunk raised, if anything

    async def _emit(self, chunk: TextDelta | ToolCallDelta) -> None:
        if self.on_chunk is None:
            return
        self.delivered = True
        try:
            await self.on_chunk(chunk)
        except Exception as exc:
            self.handler_error = exc
            raise

    async def consume(self, response: Any) -> ModelResponse:
        text: list[str] = []
        calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument pieces]]
        usage: Any = None
        finish_reason: str | None = None
        first: Any = None
        try:
            async for chunk in response:
                if first is None:
                    first = chunk
                usage = getattr(chunk, "usage", None) or usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish_reason = choice.finish_reason or finish_reason
                delta = choice.delta
                if delta is None:
                    continue
                if delta.content:
                    text.append(delta.content)
                    await self._emit(TextDelta(delta.content))
                for piece in delta.tool_calls or ():
                    await self._tool_piece(calls, piece)
        finally:
            close = getattr(response, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()
        if getattr(response, "received_finish_reason", "") is None:
            # litellm makes up finish_reason="stop" for a stream that ended without one; its
            # stream wrapper's record of what the provider sent tells the two apart.
            finish_reason = None
        tool_calls = [
            ToolCall(c[0], c[1], _parse_arguments("".join(c[2]))) for _, c in sorted(calls.items())
        ]
        content = "".join(text) or None
        message = AssistantMessage(content, tool_calls)
        tokens = reported_usage(usage) if _server_sent_usage(response) else None
        raw = _raw_from_stream(first, message, calls, finish_reason, tokens)
        if tokens is None:
            tokens = estimated_usage(_prompt_chars(self.messages), message)
        return ModelResponse(
            message, tokens, raw, finish_reason, model=getattr(first, "model", None)
        )

    async def _tool_piece(self, calls: dict[int, list[Any]], piece: Any) -> None:
        index = piece.index or 0
        function = piece.function
        name = getattr(function, "name", None) if function is not None else None
        arguments = (getattr(function, "arguments", None) if function is not None else None) or ""
        call = calls.get(index)
        if call is None:
            # A provider that sends no id gets one made up here, before the first delta, so
            # the streamed id and the final message's id are the same.
            call = calls[index] = [piece.id or new_id("call_"), name or "", []]
            await self._emit(ToolCallDelta(index=index, id=call[0], name=call[1]))
        elif name and not call[1]:
            call[1] = name
        if arguments:
            call[2].append(arguments)
            await self._emit(ToolCallDelta(index=index, arguments=arguments))


def _server_sent_usage(response: Any) -> bool:
    """Whether the server itself sent usage in this stream.

    litellm puts usage on the last chunk either way, computing it when the server sent none;
    the stream wrapper's record of the chunks it received (`chunks`) shows which it was. A
    wrapper without that record is taken at its word.
    """
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return True
    return any(_has_usage(chunk) for chunk in chunks)


def _has_usage(chunk: Any) -> bool:
    try:
        return chunk.get("usage") is not None
    except AttributeError:
        return getattr(chunk, "usage", None) is not None


def _prompt_chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(m)) for m in messages)


def _parse(response: Any, messages: list[dict[str, Any]]) -> ModelResponse:
    choice = response.choices[0]
    message = choice.message
    tool_calls = [
        ToolCall(
            call.id or new_id("call_"),
            call.function.name or "",
            _parse_arguments(call.function.arguments),
        )
        for call in (message.tool_calls or ())
    ]
    assistant = AssistantMessage(message.content or None, tool_calls)
    usage = reported_usage(getattr(response, "usage", None))
    if usage is None or usage.total_tokens == 0:  # litellm fills in zeros when there was none
        usage = estimated_usage(_prompt_chars(messages), assistant)
    return ModelResponse(
        assistant, usage, response, choice.finish_reason, model=getattr(response, "model", None)
    )


def _parse_arguments(text: Any) -> Any:
    """A tool call's arguments as a dict; text that is not a JSON object stays as it came."""
    if not isinstance(text, str):
        return text if text is not None else {}
    if not text.strip():
        return {}  # a tool without parameters: some providers send ""
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def _raw_from_stream(
    first: Any,
    message: AssistantMessage,
    calls: dict[int, list[Any]],
    finish: str | None,
    usage: Usage | None,
) -> dict[str, Any]:
    """A `chat.completion`-shaped dict of a streamed answer (cheap, and JSON as it is)."""
    wire: dict[str, Any] = {"role": "assistant", "content": message.content}
    if calls:
        wire["tool_calls"] = [
            {"id": c[0], "type": "function", "function": {"name": c[1], "arguments": "".join(c[2])}}
            for _, c in sorted(calls.items())
        ]
    return {
        "id": getattr(first, "id", None),
        "object": "chat.completion",
        "created": getattr(first, "created", None) or int(time.time()),
        "model": getattr(first, "model", None),
        "choices": [{"index": 0, "message": wire, "finish_reason": finish}],
        "usage": usage.to_dict() if usage is not None else None,
    }


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """What the provider asked us to wait, in seconds, if it said and it is reasonable."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if not headers:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    return retry_after(headers)
