"""`network.mappings`: a mapping option is None, a mapping of checked entries, or refused."""

from __future__ import annotations

from typing import Any

import pytest

from network.errors import ConfigurationError
from network.mappings import mapping_entries


def _positive(key: str, value: Any) -> int:
    if not isinstance(value, int) or value <= 0:
        raise ConfigurationError(f"limits[{key!r}] must be a positive integer, got {value!r}")
    return value


def test_none_is_empty_and_each_entry_is_kept_as_its_check_returns_it() -> None:
    assert mapping_entries(None, lambda: "unused", _positive) == {}
    assert mapping_entries({"a": 1, "b": 2}, lambda: "unused", _positive) == {"a": 1, "b": 2}


def test_a_non_mapping_is_refused_in_the_options_words_and_a_bad_entry_by_its_check() -> None:
    with pytest.raises(ConfigurationError, match="^limits must map names to counts$"):
        mapping_entries([1], lambda: "limits must map names to counts", _positive)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"limits\['b'\] must be a positive integer"):
        mapping_entries({"a": 1, "b": -1}, lambda: "unused", _positive)
