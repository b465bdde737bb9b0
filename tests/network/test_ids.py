"""`new_id`: a prefix and 16 random hex digits, never the same twice."""

from __future__ import annotations

import re

from network.ids import new_id


def test_an_id_is_its_prefix_and_sixteen_hex_digits() -> None:
    assert re.fullmatch(r"run_[0-9a-f]{16}", new_id("run_"))
    assert re.fullmatch(r"[0-9a-f]{16}", new_id(""))


def test_ids_do_not_repeat() -> None:
    ids = {new_id("call_") for _ in range(10_000)}
    assert len(ids) == 10_000
