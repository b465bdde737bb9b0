"""`RetryingModel`: what both HTTP clients share, one request tried until it answers or cannot.

`OpenAIModel` and `LiteLLMModel` differ in how they send a request and read its answer
(`_send`) and in how they tell what went wrong (`_failure`, `_retry_after`). The rest is here,
once, so the two behave alike:

- Deadline: `timeout` seconds for a whole attempt, from connecting to the last byte of a stream
  (`anyio.fail_after`); a per-read timeout would let a server's keep-alive pings hold a stream
  open for ever. Running out of it is "timed out", with no HTTP status (there was no answer).
- Retries: a failure marked retryable (408, 409, 429, 5xx, connection failures, the deadline;
  `failures`) is tried again `max_retries` times, or as the `RetryPolicy` says, after what the
  server's `retry-after-ms` / `retry-after` asks (up to 60 s), else an exponential backoff from
  `retry_delay` with jitter (`retry`). Authentication and validation errors never are, nor is
  a stream once a delta reached the caller: the caller would see it twice.
- `tool_choice` that a server refuses to force (its answer says so; a bare 500 is a crash,
  retried): sent again once with `"auto"`, and remembered for this model (`tool_choice`).
- No empty successes: an answer with neither text nor a tool call, or a stream that ended
  without a finish reason, is a `ModelError` (`answer_check`).
- The caller's own `on_chunk` failure is raised unchanged, never taken for the model's.
- Streaming is explicit (`stream`): None streams exactly when the caller passes `on_chunk`,
  False never streams (the caller gets the whole answer), True always streams. Nothing else
  (a trace, a log) decides it: turning tracing on never changes the request.
- Errors: a `ModelError` naming the model and the URL without credentials, saying what
  happened, with the HTTP status when there was one; the original exception is its cause.
- `response_format` that a server refuses (llama-cpp-python: 500 naming it): not retried; a
  `ResponseFormatRefused` at once, remembered as `refuses_response_format`
  (`response_format`), so an agent in `output_mode="auto"` falls back to tool mode.
- Attempts: when a request was tried more than once, each attempt is a `ModelCall` in
  `ModelResponse.attempts` (the answered one last), so usage limits and traces count them;
  a request that failed for good lists them all in `ModelError.attempts`. A failed
  attempt's `error` is the provider's (`attempt_error_type`): the HTTP status, else the
  provider's or transport's exception type.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import anyio

from agents.models._answer_check import answer_problem
from agents.models._client_options import (
    check_api_base,
    check_api_key,
    check_model_name,
    check_stream,
)
from agents.models._failures import Failure, safe_url, transport_link
from agents.models._response_format import ResponseFormatRefused, refuses_response_format
from agents.models._retry import retries_of, wait_before_retry
from agents.models._streamed_answer import StreamedAnswer
from agents.models._tokens import CountsRequestTokens
from agents.models._tool_choice import forces_a_tool, refuses_tool_choice, relaxed
from agents.models.base import ChunkHandler, ModelRequest, ModelResponse
from agents.models.price import Price, price_from
from network.errors import ModelError
from network.history.results import ModelCall
from network.logger import get_logger
from network.numbers import check_number, checked_params
from network.run.retry_policy import RetryPolicy


class NoAnswer(Exception):
    """The server answered, but with no answer (`answer_check` says what is missing)."""


class RetryingModel(CountsRequestTokens, ABC):
    """The retrying, deadline-bound request of a model client (see the module docstring).

    A client supplies `_configure` (what it makes of its options), `_send` (one attempt),
    `_failure` (what an exception of its own means), and optionally `_prepare`,
    `_retry_after`, `_cost` and `_url`.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        stream: bool | None = None,
        retry_delay: float = 0.5,
        retry: RetryPolicy | None = None,
        price: Price | Mapping[str, Any] | None = None,
        **params: Any,
    ) -> None:
        """The options every client takes; the client's class documents its own (`model`,
        `api_base`, `api_key`, `price`, `**params`). Then `_configure`.

        Args:
            timeout: seconds one attempt may take in all, stream included.
            max_retries: how many times a 408/409/429/5xx or connection failure is retried.
            stream: None (the default): stream when the caller passes `on_chunk` (a run with
                events to send does). True: always stream. False: never stream, even for a
                caller that would take deltas (it gets the answer whole, one delta).
            retry_delay: first backoff in seconds when the server sends no `retry-after`.
            retry: a `RetryPolicy` instead of `max_retries` / `retry_delay`: its `max_attempts`
                and waits (the same type as tools' `@tool(retry=...)`). The failures retried
                stay the transient ones above.
        """
        self.name = model = check_model_name(model)
        check_number(f"model {model!r}: timeout (seconds)", timeout, above=True)
        stream = check_stream(model, stream)
        api_base = check_api_base(model, api_base)
        api_key = check_api_key(model, api_key)
        check_number(f"model {model!r}: max_retries", max_retries, integer=True)
        check_number(f"model {model!r}: retry_delay (seconds)", retry_delay)
        self.price = price_from(price, model)  # given: it wins over any price map
        self.timeout = timeout
        self.retry = retry
        self.max_retries = retries_of(retry, max_retries)
        self.stream = stream
        self.retry_delay = retry_delay
        self.params = checked_params(f"model {model!r}", params)
        self._relax_tool_choice = False  # set once the server refused a forced tool call
        # Set once the server refused `response_format` (`agents.models._response_format`).
        self.refuses_response_format = False
        self.api_base = api_base
        self.api_key = api_key
        self._configure()

    @abstractmethod
    def _configure(self) -> None:
        """What the client makes of its options, once they are set and checked."""

    @property
    @abstractmethod
    def provider(self) -> str | None:
        """The provider of this model ("openai", "anthropic", ...), for traces."""

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """Ask the model; stream deltas to `on_chunk` when given; return the whole answer.

        Streams when `on_chunk` is given, unless the model was made with `stream=False`
        (then `on_chunk` is not called: the caller gets the answer whole); always with
        `stream=True`. Raises
        `ModelError` when the request fails for good (see the module docstring).
        """
        await self._prepare()
        streaming = on_chunk is not None if self.stream is None else self.stream
        if not streaming:
            on_chunk = None
        relax = self._relax_tool_choice and forces_a_tool(request)
        sent = relaxed(request) if relax else request
        attempt = 0
        failed: list[ModelCall] = []  # the attempts that failed, for usage limits and traces
        while True:
            answer = StreamedAnswer(on_chunk) if streaming else None
            started_at, started = time.time(), time.perf_counter()
            try:
                with anyio.fail_after(self.timeout):
                    response = await self._send(sent, answer)
                problem = answer_problem(
                    response.message, response.finish_reason, streamed=streaming
                )
                if problem is not None:
                    raise NoAnswer(problem)
            except Exception as exc:
                if answer is not None and exc is answer.handler_error:
                    raise  # the caller's own failure, unchanged
                failure = self._failure_of(exc)
                error_type = attempt_error_type(exc, failure)
                failed.append(self._record(request, started_at, started, error_type))
                delivered = answer is not None and answer.delivered
                if not relax and not delivered and refuses_tool_choice(request, failure):
                    relax = self._relax_tool_choice = True
                    sent = relaxed(request)
                    _log_relaxed(self.name, failure)
                    continue
                if not delivered and refuses_response_format(request, failure):
                    self.refuses_response_format = True
                    error = self._error(failure, attempt, tuple(failed))
                    raise ResponseFormatRefused(
                        str(error),
                        model=self.name,
                        status_code=failure.status,
                        attempts=error.attempts,  # sent and refused: a request spent
                    ) from exc
                if attempt >= self.max_retries or delivered or not failure.retryable:
                    raise self._error(failure, attempt, tuple(failed)) from exc
                after = self._retry_after(exc)
                await anyio.sleep(wait_before_retry(self.retry, self.retry_delay, attempt, after))
                attempt += 1
                continue
            response.tool_choice_relaxed = relax
            response.cost_usd = await self._cost(response)  # after the deadline: may read a map
            if failed:
                answered = self._record(request, started_at, started, None, response)
                response.attempts = [*failed, answered]
            return response

    # -- what a client supplies --------------------------------------------------------------

    async def _prepare(self) -> None:
        """Before the first attempt (load a library, check credentials); raise to give up."""
        return

    @abstractmethod
    async def _send(self, request: ModelRequest, answer: StreamedAnswer | None) -> ModelResponse:
        """One attempt: send `request`; stream into `answer` when given; the whole response."""

    @abstractmethod
    def _failure(self, exc: Exception) -> Failure:
        """What an exception raised by `_send` means: what happened, and whether to retry."""

    def _retry_after(self, exc: Exception) -> float | None:
        """How long the server asked to wait before trying again, if it said."""
        return None

    async def _cost(self, response: ModelResponse) -> float | None:
        """The request's price in USD, when the client knows it (it may read a price map)."""
        return None

    def _url(self) -> str | None:
        """The URL an error names (credentials are removed first), if there is one."""
        return None

    # -- shared ------------------------------------------------------------------------------

    def _failure_of(self, exc: Exception) -> Failure:
        if isinstance(exc, NoAnswer):
            return Failure("no answer", str(exc))
        if isinstance(exc, TimeoutError):  # the deadline: no answer, so no HTTP status
            return Failure("timed out", f"no complete answer within {self.timeout:g} s", None, True)
        return self._failure(exc)

    def _error(self, failure: Failure, attempt: int, attempts: tuple[ModelCall, ...]) -> ModelError:
        url = self._url()
        where = f" at {safe_url(url)}" if url else ""
        tries = f" after {attempt + 1} attempts" if attempt else ""
        return ModelError(
            f"model {self.name!r}{where}: {failure.describe()}{tries}",
            model=self.name,
            status_code=failure.status,
            attempts=attempts,
        )

    def _record(
        self,
        request: ModelRequest,
        started_at: float,
        started: float,
        error: str | None,
        answer: ModelResponse | None = None,
    ) -> ModelCall:
        """One attempt as usage limits and traces count it."""
        took = (time.perf_counter() - started) * 1000
        if answer is None:
            return ModelCall(
                self.name, self.provider, None, started_at, took, error=error, agent=request.agent
            )
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


def attempt_error_type(exc: Exception, failure: Failure) -> str:
    """A failed attempt's `error.type`: what the provider said, never a wrapper of ours.

    The HTTP status when the server answered with one (`"401"`, `"500"`); else, when the
    network failed, the type of the transport's own exception found in the chain of causes
    (`ClientConnectorError`, `TimeoutError` for the deadline), never a client library's
    wrapper of it (litellm reports a refused connection as `InternalServerError`); else the
    type of the exception the provider's library raised; else, for what this library found
    wrong with an answer, what it was (`no_answer`, `malformed_response`, `stream_failed`).
    """
    if failure.status is not None:
        return str(failure.status)
    found = transport_link(exc)
    if found is not None:  # the transport's own exception, not a library's wrapper of it
        return type(found[1]).__name__  # (litellm's "InternalServerError" for a refusal)
    if not type(exc).__module__.startswith("agents."):
        return type(exc).__name__
    return "_".join(re.findall(r"[a-z0-9]+", failure.kind.lower())) or "_OTHER"


def _log_relaxed(model: str, failure: Failure) -> None:
    get_logger().warning(
        "model.tool_choice_relaxed",
        model=model,
        reason=failure.describe(),
        note="the server refused a forced tool_choice; sending tool_choice='auto' from now on",
    )
