"""When to try a model call again, and how long to wait first; shared by both clients."""

from __future__ import annotations

import random
import time
from typing import Any

from network.errors import ConfigurationError
from network.run.retry_policy import RetryPolicy

MAX_RETRY_AFTER = 60.0


def retry_after(headers: Any) -> float | None:
    """What the server asked us to wait, in seconds, if it said and it is reasonable.

    Reads `retry-after-ms` (OpenAI's), then `retry-after` as seconds or an HTTP date.
    """
    if not headers:
        return None
    try:
        get = headers.get
        if (ms := get("retry-after-ms")) is not None:
            seconds = float(ms) / 1000
        elif (value := get("retry-after")) is not None:
            seconds = _seconds(str(value))
        else:
            return None
    except (TypeError, ValueError, AttributeError):
        return None
    return seconds if 0 <= seconds <= MAX_RETRY_AFTER else None


def backoff(first_delay: float, attempt: int, after: float | None = None) -> float:
    """The wait before retry number `attempt + 1`: the server's figure, else exponential, at
    most `MAX_RETRY_AFTER` (as long as a server may ask for): uncapped, `max_retries=12`
    slept 17 minutes before its last try, and `2.0**attempt` overflowed past 1023 retries."""
    if after is not None:
        return float(after)
    return min(MAX_RETRY_AFTER, first_delay * 2.0 ** min(attempt, 64)) * random.uniform(0.75, 1.0)


def wait_before_retry(
    policy: RetryPolicy | None, first_delay: float, attempt: int, after: float | None
) -> float:
    """The wait before retry number `attempt + 1` of a model request: the client's own
    backoff, or the `RetryPolicy` it was given (which may ignore the server's figure)."""
    if policy is None:
        return backoff(first_delay, attempt, after)
    if after is not None and policy.respect_retry_after:
        return after
    return policy.delay(attempt + 1)


def retries_of(policy: RetryPolicy | None, max_retries: int) -> int:
    """How many times a failed request is retried: the policy's tries but the first, else
    the client's `max_retries`."""
    if policy is None:
        return max(0, max_retries)
    if not isinstance(policy, RetryPolicy):
        raise ConfigurationError(f"retry must be a RetryPolicy, got {policy!r}")
    return policy.max_attempts - 1


def _seconds(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        import email.utils  # noqa: PLC0415 (~10 ms: only a Retry-After that is a date needs it)

        when = email.utils.parsedate_to_datetime(value)  # raises ValueError when not a date
        return max(0.0, when.timestamp() - time.time())
