"""Old spellings that keep working for one release, with a `DeprecationWarning`.

The library's constructors take the name positionally and everything else by keyword
(`Network("n", agents=[...], router=...)`, `Agent("a", system=...)`). Code written for the
positional form keeps running through `positional_arguments` until the next release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from network.warned import warn


def positional_arguments(
    what: str,
    positional: Sequence[Any],
    names: Sequence[str],
    given: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> dict[str, Any]:
    """Map the old positional arguments of a constructor to their keywords, warning once.

    `given` holds the keywords as passed, `defaults` their defaults: a keyword passed both
    ways is a `TypeError`, as Python itself would raise.
    """
    if len(positional) > len(names):
        raise TypeError(
            f"{what} takes at most {len(names) + 1} positional arguments "
            f"({len(positional) + 1} given); pass everything after the name by keyword"
        )
    taken = dict(zip(names, positional, strict=False))
    result = dict(given)
    for key, value in taken.items():
        if given[key] is not defaults[key]:
            raise TypeError(f"{what} got multiple values for argument {key!r}")
        result[key] = value
    warn(
        f"{what}: passing {', '.join(taken)} by position is deprecated (removed in the next "
        f"release); pass them by keyword: {', '.join(f'{key}=...' for key in taken)}",
        DeprecationWarning,
    )
    return result
