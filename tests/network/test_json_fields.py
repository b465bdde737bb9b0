"""`network.json_fields`: a record's fields as JSON data, camelCase names, in declared order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from network.json_fields import camel, json_fields


@dataclass
class _Inner:
    value: int

    def to_dict(self) -> dict[str, Any]:
        return {"v": self.value}


@dataclass(slots=True)
class _Report:
    still_failing: list[str]
    means: dict[str, tuple[float | None, float | None]]
    inner: list[_Inner] = field(default_factory=list)
    name: str | None = None


def test_names_are_camel_case_in_the_declared_order() -> None:
    assert camel("still_failing") == "stillFailing"
    assert camel("answered_from_recording") == "answeredFromRecording"
    assert camel("turn") == "turn"
    data = json_fields(_Report(["a"], {}))
    assert list(data) == ["stillFailing", "means", "inner", "name"]


def test_values_become_json_data_and_lists_are_new() -> None:
    failing = ["a", "b"]
    report = _Report(failing, {"score": (0.5, None)}, [_Inner(3)], "n")
    data = json_fields(report)
    assert json.dumps(data) == (
        '{"stillFailing": ["a", "b"], "means": {"score": [0.5, null]}, '
        '"inner": [{"v": 3}], "name": "n"}'
    )
    data["stillFailing"].append("c")  # the caller's copy: the record is left as it was
    assert failing == ["a", "b"]
