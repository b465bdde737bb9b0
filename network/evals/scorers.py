"""Scorers: what a case's run is judged by.

A scorer is called with the case and what its run did (`CaseRun`) and returns a `Score`
(passed or not, a value from 0 to 1, and why), or None when the case gives it nothing to check
(a case without `expected_state` is not scored on state). Built in:

- `OutputEquals`: the output equals `expected_output`: as text (`strip`ped), or typed: the
  last agent's typed output (`output_value`, its JSON form) equals the expected JSON value;
- `OutputContains(text)`: the output contains `text` (or each of several);
- `StateMatches`: each key of `expected_state` ends with the expected value (JSON equality);
- `TrajectoryMatches(mode)`: the tool calls made match `expected_tools`: "exact" (the same
  calls in the same order), "in_order" (the expected ones appear in order, others between
  them allowed) or "any_order"; an expected call's `arguments` must match those given;
- `LLMJudge(model, rubric)`: a model of yours reads the input, the output and the rubric and
  answers `{"pass": true|false, "reason": "..."}` (`network.evals.judge`);
- `scorer(fn)`: a plain function `fn(case, run)` (sync or async) returning a bool, a number
  from 0 to 1, a `Score`, or None.

`DEFAULT_SCORERS` (what a dataset is scored with unless told otherwise): output equality,
state and trajectory in order: each applies only to the cases that expect it.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from network.errors import ConfigurationError
from network.evals.cases import Case, ExpectedToolCall
from network.history.results import ToolCallRecord, Usage
from network.numbers import check_number


@dataclass(slots=True)
class Score:
    """One scorer's verdict on one case.

    Attributes:
        name: the scorer's name.
        passed: whether the case passes it.
        value: from 0 (nothing right) to 1 (all right); 1.0 or 0.0 for a yes/no check.
        reason: why, in a line (what differs, what the judge said).
    """

    name: str
    passed: bool
    value: float
    reason: str = ""

    def __post_init__(self) -> None:
        # A NaN value made every mean NaN and the report's JSON invalid (NaN is no JSON), and
        # a value past 1 or a string broke `means()`: a verdict is refused where it is made.
        if not isinstance(self.name, str) or not isinstance(self.reason, str):
            raise ConfigurationError(
                f"Score: name and reason must be strings, got {self.name!r} and {self.reason!r}"
            )
        if not isinstance(self.passed, bool):
            raise ConfigurationError(
                f"Score {self.name!r}: passed must be a bool, got {self.passed!r}"
            )
        check_number(f"Score {self.name!r}: value", self.value, maximum=1)

    def to_dict(self) -> dict[str, Any]:
        """The score as JSON data (its fields, by name)."""
        return asdict(self)


@dataclass(slots=True)
class CaseRun:
    """What a case's run did, as the scorers read it.

    Attributes:
        output: the run's final text (None when it gave none).
        output_value: the last agent call's typed output, as JSON data (None without one).
        state: the run's final key-values, as JSON data.
        tool_calls: every tool call the run made, in order (records of the agent calls).
        agents: the agents called, in order.
        usage: the tokens spent.
        stop_reason: why the run ended.
        result: the `RunResult` (None when the run failed before it had one).
    """

    output: str | None
    output_value: Any = None
    state: dict[str, Any] = field(default_factory=dict)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    result: Any = None


class Scorer:
    """Base of a scorer: `name`, and `score(case, run)` returning a `Score` or None."""

    name: str = "scorer"

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        """The verdict on `case` (None: the case gives this scorer nothing to check)."""
        raise NotImplementedError

    def _verdict(self, passed: bool, reason: str = "", value: float | None = None) -> Score:
        return Score(
            self.name, passed, (1.0 if passed else 0.0) if value is None else value, reason
        )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class OutputEquals(Scorer):
    """The output equals `expected_output` (text, or the typed output's JSON form)."""

    name = "output"

    def __init__(self, *, strip: bool = True) -> None:
        self.strip = strip

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        expected = case.expected_output
        if expected is None:
            return None
        if not isinstance(expected, str) or run.output_value is not None:
            actual = run.output_value
            if _canonical(actual) == _canonical(expected):
                return self._verdict(True)
            if actual is None:  # YAML's `expected_output: 42` is a number, not the text "42"
                return self._verdict(
                    False,
                    f"expected the typed output {_canonical(expected)[:200]} and the run has "
                    "none (its text is compared with a string: quote it in YAML)",
                )
            return self._verdict(False, f"typed output {_canonical(actual)[:200]}")
        actual_text = run.output or ""
        if self.strip:
            actual_text, expected = actual_text.strip(), expected.strip()
        if actual_text == expected:
            return self._verdict(True)
        return self._verdict(False, f"output {actual_text[:200]!r}, expected {expected[:200]!r}")


class OutputContains(Scorer):
    """The output contains `text` (each of several), `case_sensitive` or not."""

    name = "contains"

    def __init__(self, text: str | Sequence[str], *, case_sensitive: bool = True) -> None:
        # a bare None or number was a TypeError from list(); a dict's keys were taken
        is_list = isinstance(text, Sequence) and not isinstance(text, bytes)
        texts = [text] if isinstance(text, str) else list(text) if is_list else []
        if not texts or not all(isinstance(item, str) and item for item in texts):
            raise ConfigurationError(
                f"OutputContains: text must be a non-empty string or strings, got {text!r}"
            )
        self.texts = texts
        self.case_sensitive = case_sensitive

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        output = run.output or ""
        if not self.case_sensitive:
            output = output.lower()
        missing = [
            text
            for text in self.texts
            if (text if self.case_sensitive else text.lower()) not in output
        ]
        found = len(self.texts) - len(missing)
        reason = f"missing {', '.join(repr(text) for text in missing)}" if missing else ""
        return self._verdict(not missing, reason, found / len(self.texts))


class StateMatches(Scorer):
    """Each key of `expected_state` ends with its expected value."""

    name = "state"

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        expected = case.expected_state
        if expected is None:
            return None
        wrong = [
            key
            for key, value in expected.items()
            if key not in run.state or _canonical(run.state[key]) != _canonical(value)
        ]
        if not expected:
            return self._verdict(True)
        value = (len(expected) - len(wrong)) / len(expected)
        if not wrong:
            return self._verdict(True, value=value)
        said = "; ".join(
            f"{key}: {_canonical(run.state[key])[:120]}" if key in run.state else f"{key}: unset"
            for key in wrong
        )
        return self._verdict(False, f"keys differ: {said}", value)


TrajectoryMode = Literal["exact", "in_order", "any_order"]


def _matches(expected: ExpectedToolCall, actual: ToolCallRecord) -> bool:
    if expected.name != actual.name:
        return False
    if expected.arguments is None:
        return True
    given = actual.arguments if isinstance(actual.arguments, dict) else {}
    return all(
        key in given and _canonical(given[key]) == _canonical(value)
        for key, value in expected.arguments.items()
    )


class TrajectoryMatches(Scorer):
    """The tool calls made match `expected_tools` ("exact", "in_order" or "any_order")."""

    name = "trajectory"

    def __init__(self, mode: TrajectoryMode = "in_order") -> None:
        if mode not in ("exact", "in_order", "any_order"):
            raise ConfigurationError(
                f"TrajectoryMatches: mode must be 'exact', 'in_order' or 'any_order', got {mode!r}"
            )
        self.mode = mode

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        expected = case.expected_tools
        if expected is None:
            return None
        actual = run.tool_calls
        made = ", ".join(call.name for call in actual) or "none"
        if self.mode == "exact":
            same = len(expected) == len(actual) and all(
                _matches(e, a) for e, a in zip(expected, actual, strict=True)
            )
            found = sum(1 for e, a in zip(expected, actual, strict=False) if _matches(e, a))
        else:
            found = self._found(expected, actual)
            same = found == len(expected)
        value = found / len(expected) if expected else (1.0 if same else 0.0)
        return self._verdict(same, "" if same else f"tool calls made: {made}", value)

    def _found(self, expected: list[ExpectedToolCall], actual: list[ToolCallRecord]) -> int:
        """How many expected calls the run made (in order, or anywhere, each used once)."""
        if self.mode == "in_order":
            found, at = 0, 0
            for wanted in expected:
                while at < len(actual) and not _matches(wanted, actual[at]):
                    at += 1
                if at == len(actual):
                    break
                found, at = found + 1, at + 1
            return found
        left = list(actual)
        found = 0
        for wanted in expected:
            for index, call in enumerate(left):
                if _matches(wanted, call):
                    found += 1
                    del left[index]
                    break
        return found


ScoreFunction = Callable[[Case, CaseRun], Any]


class FunctionScorer(Scorer):
    """A plain function as a scorer (see `scorer`)."""

    def __init__(self, function: ScoreFunction, name: str | None = None) -> None:
        if not callable(function):
            raise ConfigurationError(f"scorer: {function!r} is not callable")
        self.function = function
        self.name = name or str(getattr(function, "__name__", "function"))

    async def score(self, case: Case, run: CaseRun) -> Score | None:
        said = self.function(case, run)
        if inspect.isawaitable(said):
            said = await said
        if said is None or isinstance(said, Score):
            return said
        if isinstance(said, bool):
            return self._verdict(said)
        # the range first: an int past a float's range (10**400) has no `isfinite`
        if isinstance(said, int | float) and 0 <= said <= 1 and math.isfinite(said):
            return self._verdict(said >= 1, value=float(said))
        shown = repr(said) if not isinstance(said, int) or said < 10**50 else "a huge int"
        raise ConfigurationError(
            f"scorer {self.name!r} returned {shown[:100]}: return a bool, a number from 0 to 1, "
            "a Score or None"
        )


def scorer(function: ScoreFunction | None = None, *, name: str | None = None) -> Any:
    """A function `fn(case, run)` as a scorer: `@scorer` or `@scorer(name="...")`."""
    if function is None:
        return lambda fn: FunctionScorer(fn, name)
    return FunctionScorer(function, name)


def default_scorers() -> list[Scorer]:
    """What a dataset is scored with unless told otherwise (see the module docstring)."""
    return [OutputEquals(), StateMatches(), TrajectoryMatches("in_order")]


def check_scorers(scorers: Sequence[Any]) -> list[Scorer]:
    """`scorers=` checked: each a `Scorer` (a plain function is wrapped), names unique."""
    if isinstance(scorers, str | Scorer) or not isinstance(scorers, Sequence):
        # one scorer given alone was a TypeError (not iterable); a string, each letter refused
        raise ConfigurationError(
            f"evaluate: scorers must be a list of scorers, got {scorers!r:.100}"
        )
    found: list[Scorer] = []
    for item in scorers:
        if not isinstance(item, Scorer):
            if callable(item) and not isinstance(item, type):
                item = FunctionScorer(item)
            else:
                raise ConfigurationError(f"evaluate: {item!r} is not a Scorer")
        name = getattr(item, "name", None)
        if not isinstance(name, str) or not name.strip():
            # each verdict is a `Score` named after its scorer: a None name failed the first
            # case it scored, and ended the whole evaluation
            raise ConfigurationError(
                f"evaluate: scorer {item!r:.100} needs a non-blank name, got {name!r:.100}"
            )
        if any(known.name == item.name for known in found):
            raise ConfigurationError(f"evaluate: two scorers are named {item.name!r}")
        found.append(item)
    return found
