"""One check for every mapping option of the library: None, or a mapping whose entries are
each checked, or refused.

An option that maps names to things (`resources=`, `state_in=`, an MCP server's `env=` or
`outputs_to_state=`) goes through `mapping_entries`: None means empty, anything but a mapping
is a `ConfigurationError` in the option's own words, and each entry is checked by the
option's own rule, which raises for a bad one (naming the option and the key) and returns
the value kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from network.errors import ConfigurationError

K = TypeVar("K")
V = TypeVar("V")

__all__ = ["mapping_entries"]


def mapping_entries(
    given: Mapping[K, Any] | None,
    refusal: Callable[[], str],
    entry: Callable[[K, Any], V],
) -> dict[K, V]:
    """`given` as a dict of what `entry(key, value)` keeps of each entry (it raises for a bad
    one); `{}` for None; a `ConfigurationError` saying `refusal()` when `given` is not a
    mapping at all."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ConfigurationError(refusal())
    return {key: entry(key, value) for key, value in given.items()}
