"""One check for every numeric option of the library: a finite number, in range, or refused.

Every count, limit, timeout, delay and price a user passes goes through `check_number`, so
NaN, infinity, a negative value and a bool are refused the same way everywhere, with a
`ConfigurationError` naming the option (`UsageLimits.max_cost_usd`, `tool 'fetch': timeout`).

Why it matters: a NaN compares false with everything, so a NaN cap (`cost >= nan`) is never
reached and a NaN delay slips past `min()`; infinity sleeps forever. Both are refused rather
than given a meaning. A bool is an int to Python but never a count a user meant.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any, TypeVar

from network.errors import ConfigurationError

_FLOAT_MAX = sys.float_info.max

N = TypeVar("N", bound=float | None)


def check_number(
    field: str,
    value: N,
    *,
    integer: bool = False,
    minimum: float = 0,
    above: bool = False,
    maximum: float | None = None,
    optional: bool = False,
    error: type[Exception] = ConfigurationError,
) -> N:
    """`value` when it is a finite number in range; else `error` naming `field`.

    Args:
        field: what the value is, as the user knows it (`"RetryPolicy.backoff"`).
        integer: an int is required (not a float, not a bool).
        minimum: the smallest value allowed (0: negatives are refused).
        above: the value must be strictly greater than `minimum` (a timeout of 0 is none).
        maximum: the largest value allowed, when there is one.
        optional: None is allowed (no value: the option is off).
        error: the exception type raised (`ConfigurationError` unless the caller's
            contract names another, e.g. `ValueError` for a pydantic validator).
    """
    if value is None:
        if optional:
            return value
        raise error(f"{field} must be {_wanted(integer, minimum, above, maximum)}, got None")
    number: Any = value
    valid = isinstance(number, int) if integer else isinstance(number, int | float)
    if (
        isinstance(number, bool)
        or not valid
        or not _finite(number, integer)
        or (number <= minimum if above else number < minimum)
        or (maximum is not None and number > maximum)
    ):
        shown = repr(value) if not isinstance(value, int) or abs(value) < 10**50 else "a huge int"
        raise error(f"{field} must be {_wanted(integer, minimum, above, maximum)}, got {shown}")
    return value


def _finite(number: float, integer: bool) -> bool:
    """A float that is not NaN or infinity; any int for an integer option; for another, an
    int within a float's range (`math.isfinite` raised OverflowError past it, and such a
    number is none a float option can hold)."""
    if isinstance(number, int):
        return integer or abs(number) <= _FLOAT_MAX
    return math.isfinite(number)


def check_sizes(owner: str, error: type[Exception] = ConfigurationError, **sizes: Any) -> None:
    """Each of `sizes` (a count or size limit, by its option's name) an int >= 1; else
    `error` naming `owner` and the option (`owner` "" names the option alone)."""
    for name, value in sizes.items():
        field = f"{owner}: {name}" if owner else name
        check_number(field, value, integer=True, minimum=1, error=error)


def _wanted(integer: bool, minimum: float, above: bool, maximum: float | None) -> str:
    kind = "an int" if integer else "a finite number"
    low = f"{'>' if above else '>='} {minimum:g}"
    if maximum is None:
        return f"{kind} {low}"
    # an int bound in full (2**53 - 1 as `:g` would read 9.0072e+15, which is not the bound)
    high = f"{maximum:,}" if isinstance(maximum, int) and maximum >= 10**6 else f"{maximum:g}"
    return f"{kind} {low} and <= {high}"


# model parameters with a range every provider shares (`checked_params`)
MODEL_COUNTS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "n")
MODEL_NOT_BELOW_ZERO = ("temperature", "top_p")


def checked_params(
    owner: str, params: Mapping[str, Any], error: type[Exception] = ConfigurationError
) -> dict[str, Any]:
    """Model parameters (`Agent(params=...)`, a client's `**params`, `--param`) as a new dict
    when every value can be sent in a request body; else `error` naming `owner` (`"agent
    'writer'"`, `"model 'openai/gpt-4o'"`) and the parameter.

    JSON has no spelling for NaN or infinity: sent, they were `NaN` in the body (a provider's
    400 at the first call, or a server that read it its own way), so one anywhere in a value
    is refused; so is a lone surrogate in a string (JSON may spell one, `"\\ud800"`; no UTF-8
    body holds it, and every call failed as "request failed: UnicodeEncodeError", or through
    litellm as a made-up "HTTP 500", retried). The sampling parameters every provider shares
    get their range too: the token counts are whole numbers from 1, `temperature` and `top_p`
    not below 0. Other ranges (a provider's maximum temperature, its penalties' bounds) differ
    between providers and are theirs to judge."""
    if not isinstance(params, Mapping):
        raise error(
            f"{owner}: params must be a mapping of parameter names to values, got {params!r}"
        )
    for key, value in params.items():
        if not isinstance(key, str):
            raise error(f"{owner}: a parameter's name must be a string, got {key!r}")
        where = _non_finite(value)
        if where is not None:
            raise error(
                f"{owner}: parameter {key!r}{where} must be a finite number (JSON has no NaN "
                "or infinity)"
            )
        where = _lone_surrogate(value) if _has_utf8_form(key) else ""
        if where is not None:
            raise error(
                f"{owner}: parameter {key!r}{where} holds a lone surrogate, which no request "
                "body can carry (UTF-8 has no form for it)"
            )
        if value is None:
            continue
        if key in MODEL_COUNTS:
            check_number(f"{owner}: parameter {key!r}", value, integer=True, minimum=1, error=error)
        elif key in MODEL_NOT_BELOW_ZERO:
            check_number(f"{owner}: parameter {key!r}", value, error=error)
    return dict(params)


def _non_finite(value: Any) -> str | None:
    """Where in `value` a NaN or infinity is (`""`: the value itself, `"['a'][0]"` inside),
    or None when it has none."""
    return _where(value, lambda leaf: isinstance(leaf, float) and not math.isfinite(leaf))


def _lone_surrogate(value: Any) -> str | None:
    """Where in `value` a string (or a mapping's key) holding a lone surrogate is, or None:
    JSON may spell one, but no UTF-8 request body can carry it."""
    return _where(value, lambda leaf: isinstance(leaf, str) and not _has_utf8_form(leaf))


def _has_utf8_form(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _where(value: Any, bad: Any, path: str = "") -> str | None:
    """Where in `value` (nested mappings, lists, tuples) a leaf or a key `bad` holds for is."""
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return path if bad(value) else None
    for key, item in items:
        if bad(key):
            return f"{path}[{key!r}]"
        found = _where(item, bad, f"{path}[{key!r}]")
        if found is not None:
            return found
    return None


__all__ = ["check_number", "check_sizes", "checked_params"]
