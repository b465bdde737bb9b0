"""What an evaluation found (`EvalReport`), and two of them compared (`compare`).

A case's status: `passed` (every score that applies passed), `failed` (one did not, or the run
reached one of its limits: `limit`), `error` (the run raised), `timeout` (it ran past
`timeout_s`), `skipped` (the dataset's token budget was spent before it started). The report
prints as a table (`render`) and as JSON (`to_json`, read back by `EvalReport.from_dict`), so
a run before a change and one after it can be compared: `compare(before, after)` says which
cases were fixed, which broke, and how each scorer's mean moved.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from network.errors import ConfigurationError
from network.evals.scorers import Score
from network.json_fields import json_fields
from network.utf8 import LONE_SURROGATE, utf8_text

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
TIMEOUT = "timeout"
LIMIT = "limit"
SKIPPED = "skipped"
STATUSES = (PASSED, FAILED, ERROR, TIMEOUT, LIMIT, SKIPPED)


@dataclass(slots=True)
class CaseReport:
    """One case's run and scores.

    Attributes:
        name: the case.
        status: see the module docstring.
        scores: each applicable scorer's verdict.
        output: the run's final text.
        stop_reason: why the run ended ("" when it did not end with a result).
        error: what went wrong (`error`, `timeout`, `limit`, `skipped`): a line.
        duration_ms: how long the case took (run and scores).
        tokens: the tokens the run spent (prompt and completion).
    """

    name: str
    status: str
    scores: list[Score] = field(default_factory=list)
    output: str | None = None
    stop_reason: str = ""
    error: str | None = None
    duration_ms: float = 0.0
    tokens: int = 0

    @property
    def passed(self) -> bool:
        """Whether the case passed."""
        return self.status == PASSED

    def to_dict(self) -> dict[str, Any]:
        """The case's report as JSON data."""
        return {
            "name": self.name,
            "status": self.status,
            "scores": [score.to_dict() for score in self.scores],
            "output": self.output,
            "stopReason": self.stop_reason,
            "error": self.error,
            "durationMs": round(self.duration_ms, 3),
            "tokens": self.tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseReport:
        """A case's report back from its JSON data (`ValueError` / `TypeError` saying what is
        not one: a report read back decides what `--against` calls broken)."""
        scores = [
            Score(
                _typed(s, "name", str),
                _typed(s, "passed", bool),
                float(_typed(s, "value", int | float)),
                s.get("reason", ""),
            )
            for s in _typed(data, "scores", list, [])
        ]
        status = _typed(data, "status", str)
        if status not in STATUSES:
            raise ValueError(f"status {status!r} is none of {', '.join(STATUSES)}")
        return cls(
            _typed(data, "name", str),
            status,
            scores,
            _typed(data, "output", str | None, None),
            _typed(data, "stopReason", str, ""),
            _typed(data, "error", str | None, None),
            float(_typed(data, "durationMs", int | float, 0.0)),
            _typed(data, "tokens", int, 0),
        )


_REQUIRED = object()


def json_text(data: Any, indent: int | None = 2) -> str:
    """`data` as JSON text that can be written as UTF-8: each lone surrogate (a model's or a
    tool's text may hold one, and a case's output or a score's reason quotes it) spelled as
    its `\\uXXXX` escape, which reads back as the same string. Written raw, it was a
    `UnicodeEncodeError` from `write_text` or `print` once every case had run (and spent)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return LONE_SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def _typed(data: Any, key: str, kind: Any, default: Any = _REQUIRED) -> Any:
    """`data[key]` when it is of `kind` (a bool is no number), else `TypeError` naming it;
    `default` when the key is missing and may be."""
    if not isinstance(data, dict):
        raise TypeError(f"expected an object holding {key!r}, got {type(data).__name__}")
    if key not in data:
        if default is _REQUIRED:
            raise TypeError(f"{key!r} is missing")
        return default
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise TypeError(f"{key!r} is {type(value).__name__}: {value!r:.60}")
    return value


@dataclass(slots=True)
class EvalReport:
    """A dataset's evaluation: each case, in the dataset's order.

    Attributes:
        dataset: the dataset's name.
        network: the network's name.
        cases: each case's report.
        duration_ms: the whole evaluation's time.
    """

    dataset: str
    network: str
    cases: list[CaseReport] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def passed(self) -> int:
        """How many cases passed."""
        return sum(1 for case in self.cases if case.passed)

    @property
    def all_passed(self) -> bool:
        """Whether every case passed."""
        return self.passed == len(self.cases)

    def case(self, name: str) -> CaseReport:
        """The report of the case called `name`."""
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"no case {name!r} in the report")

    def means(self) -> dict[str, float]:
        """Each scorer's mean value over the cases it scored."""
        values: dict[str, list[float]] = {}
        for case in self.cases:
            for score in case.scores:
                values.setdefault(score.name, []).append(score.value)
        return {name: sum(found) / len(found) for name, found in values.items()}

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON data (what `agent-network eval --json` prints)."""
        return {
            "dataset": self.dataset,
            "network": self.network,
            "passed": self.passed,
            "total": len(self.cases),
            "means": self.means(),
            "durationMs": round(self.duration_ms, 3),
            "cases": [case.to_dict() for case in self.cases],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (with a UTF-8 form: see `json_text`)."""
        return json_text(self.to_dict(), indent)

    @classmethod
    def from_dict(cls, data: Any) -> EvalReport:
        """A report back from its JSON data (`ConfigurationError` when it is not one)."""
        try:
            return cls(
                _typed(data, "dataset", str),
                _typed(data, "network", str),
                [CaseReport.from_dict(case) for case in _typed(data, "cases", list)],
                float(_typed(data, "durationMs", int | float, 0.0)),
            )
        except (KeyError, TypeError, ValueError, ConfigurationError) as exc:
            raise ConfigurationError(f"not an evaluation report: {exc!r}") from None

    @classmethod
    def load(cls, path: str | Path) -> EvalReport:
        """A report saved as JSON (`agent-network eval --out FILE`)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"report {str(path)!r}: cannot read it: {exc}") from None
        return cls.from_dict(data)

    def render(self) -> str:
        """The report as a table: a line per case, its scores, then the totals."""
        lines = [f"{self.dataset} on {self.network}: {self.passed} of {len(self.cases)} passed"]
        width = max((len(case.name) for case in self.cases), default=4)
        for case in self.cases:
            scores = " ".join(
                f"{score.name}={'ok' if score.passed else 'FAIL'}" for score in case.scores
            )
            line = f"  {case.name:<{width}}  {case.status:<7}  {scores}"
            why = case.error or "; ".join(
                f"{score.name}: {score.reason}" for score in case.scores if not score.passed
            )
            lines.append(line.rstrip() + (f"  ({why})" if why else ""))
        means = ", ".join(f"{name} {value:.2f}" for name, value in self.means().items())
        if means:
            lines.append(f"means: {means}")
        return utf8_text("\n".join(lines))  # printable: see `json_text`


@dataclass(slots=True)
class Comparison:
    """Two evaluations of one dataset, before and after a change.

    Attributes:
        fixed: cases that failed before and pass now.
        broke: cases that passed before and fail now.
        still_failing: cases that fail in both.
        added: cases only the second has; removed: only the first.
        new_failing: the added cases that fail (no earlier report knew them to fail).
        means: each scorer's mean, before and after.
    """

    fixed: list[str] = field(default_factory=list)
    broke: list[str] = field(default_factory=list)
    still_failing: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    new_failing: list[str] = field(default_factory=list)
    means: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)

    @property
    def regressed(self) -> bool:
        """Whether a case that passed fails now, or a case the earlier report did not have
        fails (a baseline tolerates the failures it knew of, not new ones)."""
        return bool(self.broke or self.new_failing)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON data: its fields, camelCase names (`network.json_fields`)."""
        return json_fields(self)

    def render(self) -> str:
        """The comparison as text."""
        lines = ["compared with the earlier report:"]
        for label, names in (
            ("broke", self.broke),
            ("fixed", self.fixed),
            ("still failing", self.still_failing),
            ("new and failing", self.new_failing),
            ("added", self.added),
            ("removed", self.removed),
        ):
            if names:
                lines.append(f"  {label}: {', '.join(names)}")
        if len(lines) == 1:
            lines.append("  no case changed")
        for name, (before, after) in self.means.items():
            shown = [("-" if value is None else f"{value:.2f}") for value in (before, after)]
            lines.append(f"  {name}: {shown[0]} -> {shown[1]}")
        return utf8_text("\n".join(lines))  # a name read back from JSON may hold a surrogate


def compare(before: EvalReport, after: EvalReport) -> Comparison:
    """What changed from `before` to `after` (see `Comparison`)."""
    old = {case.name: case for case in before.cases}
    new = {case.name: case for case in after.cases}
    found = Comparison()
    for name, case in new.items():
        earlier = old.get(name)
        if earlier is None:
            found.added.append(name)
            if not case.passed:
                found.new_failing.append(name)
        elif earlier.passed and not case.passed:
            found.broke.append(name)
        elif not earlier.passed and case.passed:
            found.fixed.append(name)
        elif not case.passed:
            found.still_failing.append(name)
    found.removed = [name for name in old if name not in new]
    old_means, new_means = before.means(), after.means()
    for name in dict.fromkeys([*old_means, *new_means]):
        found.means[name] = (old_means.get(name), new_means.get(name))
    return found
