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
  with `num_retries=0`, and the retry loop the native client uses (`agents.models._retrying`:
  deadline, retries with `Retry-After`, `tool_choice` fallback, answer check, errors, one
  `ModelCall` per attempt) wraps each `acompletion`.
- Errors: what litellm raises is read by what it means (`_failure`), never by the class names
  and texts of one litellm release: litellm's `status_code` is made up for failures that never
  got an HTTP answer (it says "500" for a refused connection, for missing credentials and for a
  stream that broke after a 200), so the chain of causes it keeps decides, in this order: an
  HTTP status the server really answered (the HTTP client's own record of the response, with
  the server's words); a network failure (connection refused, timed out, connection failed);
  a stream that broke while being read (after the 200: what the server said in it, if it said
  anything, else a stream that ended without a finish reason, as the native client reports
  it); credentials litellm's `validate_environment` finds missing (never retried); a call
  that failed in this process (a value it could not encode, the openai SDK's own refusal to
  build a client, an answer litellm could not read: "request failed", no status, never
  retried); and only then the status litellm reports, for providers it does not reach over
  HTTP.
- Keys: a server given by `api_base` may run without one, but the openai SDK under litellm's
  `openai/` and other OpenAI-compatible routes refuses to send without a key ("missing
  credentials" for a llama.cpp server that needs none). Given no key and finding none in the
  provider's variable, such a route sends a placeholder, as litellm's `hosted_vllm/` route
  does; a server that wants a key answers 401, and the error says none was given.
- Deadline: `timeout` is passed to litellm and also bounds the whole attempt, stream included:
  litellm's own timeout applies per read, which a server's keep-alive pings keep resetting.
- No empty successes: an answer with neither text nor a tool call, or a stream that ended
  without the provider's finish reason (litellm makes one up; its stream wrapper records what
  the provider sent), is a `ModelError` (`agents.models._answer_check`). Through litellm's
  `hosted_vllm/` route the made-up finish reason cannot be told apart; a cut connection is
  still caught there as an empty answer or litellm's own error.
- Usage: when the provider sent none (llama.cpp's server when streaming), litellm's figure is
  its own count; it is replaced by the library's estimate, marked `Usage.estimated`.
- Streaming happens when the caller passes `on_chunk` or the model was made with
  `stream=True`; usage is asked for (`stream_options.include_usage`) where litellm says the
  provider supports it. The response is assembled from the chunks; its `raw` is a plain
  `chat.completion`-shaped dict built from them.
- Messages are converted to the wire format once each (`agents.models._wire`).
- Reasoning models: litellm's `reasoning_content` (whatever the provider called it) is kept
  on `AssistantMessage.reasoning` and streamed as `ReasoningDelta`s, never sent back.
- Size: one answer may take `MAX_ANSWER_BYTES` (64 MiB, as in the native client); past it,
  a `ModelError` "answer too large", not retried. litellm shows parsed chunks, not bytes: a
  stream counts each chunk's text, reasoning and tool-call pieces in UTF-8 plus the fewest
  bytes a chunk's frame takes (`_answer_size`), and is closed once past the bound. A whole
  answer counts its body's length as the server sent it (else what its message carries);
  litellm has read that body whole before we see it, so the bound keeps it from the caller
  and the thread, not from memory: stream (`stream=True`) to bound memory too.
- For usage limits and traces each answer carries the model that answered, its cached prompt
  tokens and its price from litellm's offline map (`cost_usd`, None for a model not in it).
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
import sys
from collections.abc import Mapping
from typing import Any

import anyio

from agents.models._answer_check import answer_problem
from agents.models._answer_size import (
    CHUNK_FRAME_BYTES,
    MAX_ANSWER_BYTES,
    AnswerTooLarge,
    text_bytes,
    too_large,
)
from agents.models._api_base import needs_api_base
from agents.models._failures import (
    Failure,
    answered_status,
    cause_chain,
    server_body,
    status_failure,
    transport_failure,
)
from agents.models._openai_body import wire_tool_choice
from agents.models._per_list import PerList
from agents.models._retry import retry_after
from agents.models._retrying import RetryingModel
from agents.models._streamed_answer import StreamedAnswer
from agents.models._text import utf8_json, utf8_text
from agents.models._tool_arguments import parse_arguments
from agents.models._tool_call_ids import own_id
from agents.models._usage import estimated_usage, reported_usage
from agents.models._wire import to_wire_list
from agents.models.base import ModelRequest, ModelResponse
from network.errors import ConfigurationError
from network.history.messages import AssistantMessage, ToolCall
from network.history.results import Usage

_litellm: Any = None


class StreamBroke(Exception):
    """litellm raised while its stream was being read, after the server had answered 200.

    Whatever status litellm puts on such an error is its own: the server's answer was a
    success that stopped short. `problem` is what was wrong with the answer at that point (a
    stream without a finish reason, `answer_check`), None when its finish reason had come.
    """

    def __init__(self, problem: str | None) -> None:
        super().__init__(problem or "the stream failed after its finish reason")
        self.problem = problem


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

# The key sent to a server of your own given no key (`LiteLLMModel._keyless_server`): what
# litellm's `hosted_vllm/` route sends in the same case.
NO_KEY = "fake-api-key"


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


class LiteLLMModel(RetryingModel):
    """A model served through `litellm.acompletion`.

    Its `timeout`, `stream` and retry options are the ones every client takes (documented
    with `__init__`, below).

    Args:
        model: a litellm model string, e.g. `"openai/gpt-4o-mini"`, `"anthropic/claude-..."`,
            or `"hosted_vllm/<name>"` for a self-hosted OpenAI-compatible server.
        api_base: the provider's base URL (e.g. `http://127.0.0.1:8000/v1`).
        api_key: the provider's key; litellm reads the provider's usual env var when None.
        price: the model's `Price` (USD per million tokens, or a mapping of its fields); it
            wins over litellm's price map. Default: litellm's price of `model`, if any.
        **params: extra `acompletion` arguments (temperature, max_tokens, ...); a request's
            own `params` override them.
    """

    def _configure(self) -> None:
        # The arguments every call shares, built once. num_retries=0 turns off both the openai
        # SDK's retries and litellm's wrapper retries: `complete` retries (module docstring).
        self._base: dict[str, Any] = {
            "model": self.name,
            "timeout": self.timeout,
            "num_retries": 0,
        }
        if self.api_base is not None:
            self._base["api_base"] = self.api_base
        if self.api_key is not None:
            self._base["api_key"] = self.api_key
        self._base.update(self.params)
        self._provider: str | None = None
        self._stream_usage = False
        self._tool_copies = PerList(copy.deepcopy)  # litellm's vLLM route edits them in place
        self._counter: Any = _UNSET
        self._missing_keys: list[str] = []  # credentials litellm finds missing (`_prepare`)
        self._sent_no_key = False  # a placeholder key goes to a keyless server (`_prepare`)
        self._no_server = False  # a server of the user's own, with no api_base (`_api_base`)

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

    async def structured_output(self) -> str:
        """How this model takes an `output_type` (`agents.capabilities.output`): native, tool or
        prompted.

        "native" when litellm says the model supports a response schema, or when it has an
        `api_base` (llama.cpp, vLLM and Ollama all take `response_format` with a JSON schema);
        else "tool" when it supports function calling; else "prompted". "tool" once the
        server refused `response_format` (`agents.models._response_format`).
        """
        if self.refuses_response_format:
            return "tool"
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

    async def _prepare(self) -> None:
        litellm = await load_litellm()
        if self._provider is None:
            self._inspect(litellm)
            self._missing_keys = self._missing_credentials(litellm)
            if self._missing_keys and self._keyless_server(litellm):
                # The openai SDK under litellm's OpenAI-compatible routes refuses to send
                # without a key, where a server of your own needs none: send a placeholder,
                # as litellm's own `hosted_vllm/` route does (a server that wants a key says
                # 401, and the error then says that none was given).
                self._base["api_key"] = NO_KEY
                self._sent_no_key = True
        if self._no_server:  # every call, before anything is sent (`_api_base`)
            raise ConfigurationError(
                f"model {self.name!r}: provider {self._provider!r} is a server of your own "
                "and no api_base was given (nor its environment variable): litellm would send "
                "the request to api.openai.com; give the model an api_base "
                "(e.g. api_base='http://127.0.0.1:8000/v1')"
            )

    async def _send(self, request: ModelRequest, answer: StreamedAnswer | None) -> ModelResponse:
        litellm = await load_litellm()
        kwargs = self._arguments(request, streaming=answer is not None)
        response = await litellm.acompletion(**kwargs)
        if answer is None:
            if _whole_size(response) > MAX_ANSWER_BYTES:
                raise AnswerTooLarge
            return _parse(response, kwargs["messages"])
        return await _consume(response, answer, kwargs["messages"])

    def _missing_credentials(self, litellm: Any) -> list[str]:
        """The provider's credential variables litellm finds unset, when no `api_key` is given.

        A call is never refused for them (a server at `api_base` may need no key); they explain
        a failure that got no HTTP answer. Only keys, tokens and secrets count: litellm also
        lists a missing base URL (Ollama's), which is no credential.
        """
        if self.api_key is not None:
            return []
        try:
            found = litellm.validate_environment(model=self.name, api_base=self.api_base)
        except Exception:  # a model litellm does not know: nothing to say about its keys
            return []
        missing = found.get("missing_keys") if isinstance(found, Mapping) else None
        return [
            str(name)
            for name in missing or ()
            if any(word in str(name).upper() for word in ("KEY", "TOKEN", "SECRET"))
        ]

    def _keyless_server(self, litellm: Any) -> bool:
        """Whether this is a server given by `api_base` on one of litellm's OpenAI-compatible
        routes (which take a bearer key), called with no key given or found."""
        if self.api_base is None or self.api_key is not None:
            return False
        try:
            compatible = self._provider in litellm.openai_compatible_providers
        except Exception:  # an internal that moved: keep litellm's own behaviour
            compatible = False
        return compatible or self._provider == "openai"

    def _inspect(self, litellm: Any) -> None:
        """Find the provider once: whether it takes stream_options, whether tools need a copy."""
        try:
            _, provider, _, base = litellm.get_llm_provider(self.name, api_base=self.api_base)
            supported = litellm.get_supported_openai_params(
                model=self.name, custom_llm_provider=provider
            )
        except Exception:  # unknown to litellm: acompletion will say so, as a ModelError
            provider, supported, base = "", None, None
        self._provider = provider
        self._no_server = self.api_base is None and needs_api_base(
            litellm, self.name, provider, base
        )
        self._stream_usage = "stream_options" in (supported or ())

    def _arguments(self, request: ModelRequest, streaming: bool) -> dict[str, Any]:
        kwargs = dict(self._base)
        if streaming and self._stream_usage:
            kwargs["stream_options"] = {"include_usage": True}
        kwargs.pop("tools", None)  # the request's tools only, as in the native client's body
        if request.tools:
            # litellm's vLLM route edits tool schemas in place: it gets a copy, made once per
            # list (an agent's tool list lives as long as the agent, so few lists come by).
            tools = request.tools
            kwargs["tools"] = self._tool_copies(tools) if self._provider == "hosted_vllm" else tools
            if request.tool_choice:
                kwargs["tool_choice"] = wire_tool_choice(request.tool_choice)
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        if request.params:
            reserved = {"model": self.name, "tools": kwargs.get("tools")}
            kwargs.update(request.params)
            # Which model, which tools and whether it streams are the client's to say, as in
            # the native client's body (`openai_body`): `Agent(params={"stream": True})` (or
            # `--param stream=true`) had litellm hand back a stream where an answer was read
            # ("request failed: AttributeError"), and a `model` param sent another model.
            kwargs.update(reserved)
            if reserved["tools"] is None:
                del kwargs["tools"]
        kwargs["messages"] = to_wire_list(request.system, request.history)
        if streaming:
            kwargs["stream"] = True
        else:
            kwargs.pop("stream", None)
        return kwargs

    # -- failure -------------------------------------------------------------------------

    def _failure(self, exc: Exception) -> Failure:
        """What went wrong, by what litellm's chain of causes says happened (module docstring)."""
        if isinstance(exc, AnswerTooLarge):
            return too_large(MAX_ANSWER_BYTES)
        answered = answered_status(exc)
        if answered is not None:
            words = answered[1] or _first_line(str(exc))
            if answered[0] in (401, 403) and self._sent_no_key:
                names = " or ".join(self._missing_keys)
                words += f" (no api_key was given: pass api_key= or set {names})"
            return status_failure(answered[0], words)
        network = transport_failure(exc)
        if network is not None:
            return network  # no HTTP answer at all, whatever status litellm reports
        if isinstance(exc, StreamBroke):
            said = server_body(exc)
            if said is not None:
                return Failure("the server reported an error mid-stream", said)
            if exc.problem is not None:
                return Failure("no answer", exc.problem)
            return Failure("stream failed", _first_line(str(exc.__cause__ or exc)), None, True)
        if self._missing_keys and not self._sent_no_key:
            names = " or ".join(self._missing_keys)
            return Failure("missing credentials", f"pass api_key= or set {names}")
        local = _failed_in_process(exc)
        if local is not None:  # no HTTP error answered: no status; the same call fails alike
            return Failure("request failed", f"{type(local).__name__}: {_first_line(str(local))}")
        reported = _status(exc)
        if reported is not None:
            return status_failure(reported, _first_line(str(exc)))
        return Failure("request failed", f"{type(exc).__name__}: {_first_line(str(exc))}")

    def _retry_after(self, exc: Exception) -> float | None:
        return _retry_after(exc)

    async def _cost(self, response: ModelResponse) -> float | None:
        if self.price is not None:
            return self.price.cost(response.usage)
        return cost_usd(self.name, response.usage)

    def _url(self) -> str | None:
        return self.api_base


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:500] if text.strip() else ""


async def _consume(
    response: Any, answer: StreamedAnswer, messages: list[dict[str, Any]]
) -> ModelResponse:
    """Read one litellm stream into `answer`, then assemble the whole response."""
    usage: Any = None
    first: Any = None
    size = 0  # bytes the stream took at least (`_answer_size`)
    chunks = response.__aiter__()
    try:
        while True:
            try:
                chunk = await chunks.__anext__()
            except StopAsyncIteration:
                break
            except Exception as exc:  # litellm's, while reading: the server had answered 200
                raise StreamBroke(_stream_problem(answer)) from exc
            if first is None:
                first = chunk
            usage = getattr(chunk, "usage", None) or usage
            size += CHUNK_FRAME_BYTES  # litellm keeps every chunk: empty ones count too
            if size > MAX_ANSWER_BYTES:
                raise AnswerTooLarge
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            answer.finish_reason = choice.finish_reason or answer.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            reasoning = _reasoning_of(delta)
            size += _delta_bytes(delta, reasoning)
            if size > MAX_ANSWER_BYTES:
                raise AnswerTooLarge
            if reasoning:
                await answer.add_reasoning(reasoning)
            if delta.content:
                await answer.add_text(delta.content)
            for piece in delta.tool_calls or ():
                function = piece.function
                name = getattr(function, "name", None) if function is not None else None
                arguments = getattr(function, "arguments", None) if function is not None else None
                await answer.add_tool_piece(piece.index or 0, piece.id, name, arguments or "")
    finally:
        close = getattr(response, "aclose", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()
    if getattr(response, "received_finish_reason", "") is None:
        # litellm makes up finish_reason="stop" for a stream that ended without one; its
        # stream wrapper's record of what the provider sent tells the two apart.
        answer.finish_reason = None
    message = answer.message()
    tokens = reported_usage(usage) if _server_sent_usage(response) else None
    heading = {name: getattr(first, name, None) for name in ("id", "created", "model")}
    raw = answer.raw(message.content, heading, tokens.to_dict() if tokens is not None else None)
    if tokens is None:
        tokens = estimated_usage(_prompt_chars(messages), message)
    return ModelResponse(message, tokens, raw, answer.finish_reason, model=heading["model"])


def _delta_bytes(delta: Any, reasoning: str | None) -> int:
    """The UTF-8 bytes of what one streamed delta carries: text, reasoning, tool-call pieces."""
    size = text_bytes(reasoning) + text_bytes(delta.content)
    for piece in delta.tool_calls or ():
        function = piece.function
        if function is not None:
            size += text_bytes(getattr(function, "name", None))
            size += text_bytes(getattr(function, "arguments", None))
    return size


def _whole_size(response: Any) -> int:
    """The bytes of a whole (not streamed) answer: its body's length as the server said it
    (litellm keeps the header), else what its message carries (text, reasoning, tool calls).

    litellm has read the body whole by then: the bound keeps an answer that large from the
    caller and the thread store, not from this process's memory (module docstring).
    """
    hidden = getattr(response, "_hidden_params", None)
    headers = hidden.get("additional_headers") if isinstance(hidden, Mapping) else None
    said = headers.get("llm_provider-content-length") if isinstance(headers, Mapping) else None
    if isinstance(said, str) and said.isdigit():
        return int(said)
    size = 0
    for choice in getattr(response, "choices", None) or ():
        message = getattr(choice, "message", None)
        if message is None:
            continue
        size += text_bytes(message.content) + text_bytes(_reasoning_of(message))
        for call in getattr(message, "tool_calls", None) or ():
            size += text_bytes(call.function.name) + text_bytes(call.function.arguments)
    return size


def _stream_problem(answer: StreamedAnswer) -> str | None:
    """What a stream that broke off lacked: its finish reason (in `answer_check`'s words), or
    nothing when the finish reason had come."""
    if answer.finish_reason is not None:
        return None
    return answer_problem(AssistantMessage(None), None, streamed=True)


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
    tool_calls: list[ToolCall] = []
    for call in message.tool_calls or ():
        call_id = own_id(call.id, [earlier.id for earlier in tool_calls])
        name = utf8_text(call.function.name or "")
        tool_calls.append(ToolCall(call_id, name, parse_arguments(call.function.arguments)))
    content, reasoning = message.content, _reasoning_of(message)
    assistant = AssistantMessage(
        utf8_text(content) if isinstance(content, str) and content else content or None,
        tool_calls,
        reasoning=utf8_text(reasoning) if reasoning else None,
    )
    usage = reported_usage(getattr(response, "usage", None))
    if usage is None or usage.total_tokens == 0:  # litellm fills in zeros when there was none
        usage = estimated_usage(_prompt_chars(messages), assistant)
    raw = response
    sent = [content, reasoning]
    for call in message.tool_calls or ():
        sent += [call.function.name, call.function.arguments]
    if any(isinstance(text, str) and utf8_text(text) != text for text in sent):
        raw = utf8_json(response.model_dump(mode="json"))  # stored with the thread: mended too
    return ModelResponse(
        assistant, usage, raw, choice.finish_reason, model=getattr(response, "model", None)
    )


def _reasoning_of(part: Any) -> str | None:
    """A reasoning model's thinking in a message or delta: litellm names it
    `reasoning_content` whatever the provider called it."""
    text = getattr(part, "reasoning_content", None) or getattr(part, "reasoning", None)
    return text if isinstance(text, str) else None


def _failed_in_process(exc: BaseException) -> BaseException | None:
    """The link of `exc`'s chain saying the call failed in this process, with no HTTP error
    answered (`_failure` asks only when the chain holds none): Python's own error (a value
    the request could not be encoded with, `UnicodeError` or `TypeError`; an answer litellm
    could not read, such as its groq route's `AttributeError` on a server that is not
    Groq's), or the openai SDK's own `OpenAIError` (not one of its HTTP errors), raised for a
    client it cannot build (no key). litellm calls each an "InternalServerError" or
    "APIConnectionError" with a made-up status 500; the same request fails the same way."""
    openai = sys.modules.get("openai")
    sdk_error = getattr(openai, "OpenAIError", None) if openai is not None else None
    for link in cause_chain(exc):
        if isinstance(link, _PYTHONS_OWN) or (sdk_error is not None and type(link) is sdk_error):
            return link
    return None


# Python's errors of a program, not of a network (`OSError`, `TimeoutError`: transport_failure)
_PYTHONS_OWN = (TypeError, ValueError, AttributeError, LookupError)


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _retry_after(exc: BaseException) -> float | None:
    """What the provider asked us to wait, in seconds, if it said and it is reasonable: read
    from the first error in the chain that kept the answer's headers."""
    for link in cause_chain(exc):
        headers: Any = getattr(link, "litellm_response_headers", None)
        if not headers:
            headers = getattr(getattr(link, "response", None), "headers", None)
        wait = retry_after(headers) if headers else None
        if wait is not None:
            return wait
    return None
