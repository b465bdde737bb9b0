"""A price map is outside data: whatever its file holds, reading it never raises, and only
the entries it states well are priced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents import Price
from agents.models._price_map import read_map

GOOD = {"litellm_provider": "openai", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def map_file(tmp_path: Path, entries: dict[str, Any]) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"good": GOOD, **entries}))
    return path


def test_a_provider_that_is_not_a_string_is_skipped(tmp_path: Path) -> None:
    listed = {**GOOD, "litellm_provider": ["openai"]}  # unhashable: once a TypeError
    catalog = read_map(map_file(tmp_path, {"listed": listed}))
    assert set(catalog) == {"openai/good"}


def test_a_long_prompt_size_in_other_digits_is_ignored(tmp_path: Path) -> None:
    # "²".isdigit() is true but int("²") raises: the tier is not read, the base rates are
    superscript = {**GOOD, "input_cost_per_token_above_²_tokens": 5e-6}
    catalog = read_map(map_file(tmp_path, {"superscript": superscript}))
    assert catalog["openai/superscript"] == Price(input=1.0, output=2.0)


def test_a_map_nested_too_deep_prices_nothing(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text("[" * 100_000 + "]" * 100_000)  # json.loads: RecursionError, not ValueError
    assert read_map(path) == {}
