"""`RetryPolicy`: when a failed call is tried again, and how long to wait first.

One type for tool calls (`@tool(retry=...)`, with defaults per agent and per network: see
`agents.tools._dispatch`), model requests (`LiteLLMModel(retry=...)`, `OpenAIModel(retry=...)`) and
so routing-agent requests, which go through a model.

Tools: a transparent retry (the model never hears of the failed attempt) repeats the call,
so it happens only for a tool marked `idempotent=True`, or when the policy names the errors
to retry explicitly (`retry_on=`): a tool with side effects is never silently repeated. The
default `retry_on` (None) means the transient errors: timeouts and connection failures.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError
from network.numbers import check_number

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
"""What a policy without `retry_on` retries."""

MAX_RETRY_AFTER = 60.0  # seconds: a server asking for longer is not waited for

MAX_ATTEMPTS = 1_000
"""The most tries a policy may make (decision: past it a "retry" is a poll, which wants its
own loop; and `RetryPolicy(max_attempts=10**400)` was taken as it came)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to try, which errors to retry and how long to wait between tries.

    Args:
        max_attempts: tries in all, the first one included (1 = never retry; at most
            `MAX_ATTEMPTS`, 1,000).
        backoff: seconds before the first retry; each later wait is `backoff_factor` times
            the previous one, at most `max_delay`.
        backoff_factor: growth of the wait from one retry to the next.
        max_delay: the longest wait between two tries.
        jitter: wait a random 50-100 % of the computed time, so that many callers that failed
            together do not retry together.
        retry_on: exception types, or `predicate(exception) -> bool`, that are retried. None:
            `TRANSIENT_ERRORS`. Giving it also allows transparent retries of a tool not
            marked idempotent (you said which failures are safe to repeat).
        respect_retry_after: when the error says how long to wait (a `retry_after` attribute
            in seconds, or an HTTP response's `Retry-After` header), wait that long instead
            (up to 60 s).
    """

    max_attempts: int = 3
    backoff: float = 0.5
    backoff_factor: float = 2.0
    max_delay: float = 30.0
    jitter: bool = True
    retry_on: tuple[type[BaseException], ...] | Callable[[BaseException], bool] | None = None
    respect_retry_after: bool = True

    def __post_init__(self) -> None:
        check_number(
            "RetryPolicy.max_attempts",
            self.max_attempts,
            integer=True,
            minimum=1,
            maximum=MAX_ATTEMPTS,
        )
        for field in ("backoff", "backoff_factor", "max_delay"):
            check_number(f"RetryPolicy.{field}", getattr(self, field))
        for field in ("jitter", "respect_retry_after"):  # switches: `jitter=0.1` is no amount
            if not isinstance(getattr(self, field), bool):
                raise ConfigurationError(
                    f"RetryPolicy.{field} must be True or False, got {getattr(self, field)!r}"
                )
        retry_on = self.retry_on
        if isinstance(retry_on, type):
            object.__setattr__(self, "retry_on", (retry_on,))
        elif not (retry_on is None or callable(retry_on) or _exception_types(retry_on)):
            raise ConfigurationError(
                f"RetryPolicy: retry_on must be exception types or a predicate, got {retry_on!r}"
            )

    @property
    def explicit(self) -> bool:
        """Whether `retry_on` was given (which allows retrying a non-idempotent tool)."""
        return self.retry_on is not None

    def retries(self, error: BaseException) -> bool:
        """Whether `error` is one this policy retries."""
        retry_on = self.retry_on
        if retry_on is None:
            return isinstance(error, TRANSIENT_ERRORS)
        if isinstance(retry_on, tuple):
            return isinstance(error, retry_on)
        return bool(retry_on(error))

    def delay(self, attempt: int, error: BaseException | None = None) -> float:
        """Seconds to wait after failed try number `attempt` (1-based) before the next."""
        if self.respect_retry_after and error is not None:
            asked = retry_after_of(error)
            if asked is not None:
                return asked
        try:
            grown = self.backoff * self.backoff_factor ** (attempt - 1)
        except OverflowError:  # past a float's range (factor 10, try 400): the run's crash before
            grown = self.max_delay if self.backoff else 0.0
        wait = min(self.max_delay, grown)
        return wait * random.uniform(0.5, 1.0) if self.jitter else wait


def _exception_types(value: Any) -> bool:
    return isinstance(value, tuple) and all(
        isinstance(t, type) and issubclass(t, BaseException) for t in value
    )


def retry_after_of(error: BaseException) -> float | None:
    """The wait an error asks for: its `retry_after` (seconds), or its response's header."""
    asked: Any = getattr(error, "retry_after", None)
    if asked is None:
        headers = getattr(getattr(error, "response", None), "headers", None)
        try:
            asked = headers.get("retry-after") if headers is not None else None
        except Exception:  # a response object of some other shape
            asked = None
    try:
        seconds = float(asked) if asked is not None else None
    except (TypeError, ValueError):
        return None
    return seconds if seconds is not None and 0 <= seconds <= MAX_RETRY_AFTER else None
