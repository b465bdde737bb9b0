"""The built-in scorers and plain functions as scorers, on hand-made runs."""

from __future__ import annotations

from typing import Any

import pytest

from network import ConfigurationError
from network.evals import (
    Case,
    CaseRun,
    OutputContains,
    OutputEquals,
    Score,
    StateMatches,
    TrajectoryMatches,
    scorer,
)
from network.history.results import ToolCallRecord

pytestmark = pytest.mark.anyio


def calls(*names: str, **arguments: Any) -> list[ToolCallRecord]:
    return [ToolCallRecord(f"c{i}", name, arguments.get(name, {})) for i, name in enumerate(names)]


async def test_output_equals_text_and_typed_values() -> None:
    case = Case(name="a", input="x", expected_output="Approved.")
    assert (await OutputEquals().score(case, CaseRun(" Approved.\n"))).passed  # type: ignore[union-attr]
    failed = await OutputEquals().score(case, CaseRun("No."))
    assert failed is not None and not failed.passed and "'No.'" in failed.reason
    typed = Case(name="t", input="x", expected_output={"approved": True})
    assert (await OutputEquals().score(typed, CaseRun("{}", {"approved": True}))).passed  # type: ignore[union-attr]
    assert not (await OutputEquals().score(typed, CaseRun("{}", {"approved": False}))).passed  # type: ignore[union-attr]
    assert await OutputEquals().score(Case(name="n", input="x"), CaseRun("any")) is None
    # a number (YAML's `expected_output: 42`) is a typed value: a text run is told so (the
    # reason was "typed output null")
    number = await OutputEquals().score(
        Case(name="n", input="x", expected_output=42), CaseRun("42")
    )
    assert number is not None and not number.passed
    assert number.reason.startswith("expected the typed output 42 and the run has none")


async def test_contains_counts_what_it_found() -> None:
    score = await OutputContains(["add", "test", "sub"]).score(
        Case(name="a", input="x"), CaseRun("add and test")
    )
    assert score is not None and not score.passed and score.value == pytest.approx(2 / 3)
    assert "'sub'" in score.reason
    loose = OutputContains("ADD", case_sensitive=False)
    assert (await loose.score(Case(name="a", input="x"), CaseRun("add"))).passed  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="OutputContains"):
        OutputContains([])


@pytest.mark.parametrize("text", [None, 5, b"add", {"add": 1}, ["add", None]])
def test_contains_refuses_what_is_not_text_by_name(text: object) -> None:
    # Before, None and 5 were a bare TypeError from list() ("'NoneType' object is not
    # iterable"), and a dict's keys were taken as the texts.
    with pytest.raises(ConfigurationError, match=r"^OutputContains: text must be a non-empty"):
        OutputContains(text)  # type: ignore[arg-type]


async def test_state_matches_the_expected_keys_only() -> None:
    case = Case(name="a", input="x", expected_state={"plan": "p", "files": {"a.py": "x"}})
    good = CaseRun("", state={"plan": "p", "files": {"a.py": "x"}, "other": 1})
    assert (await StateMatches().score(case, good)).passed  # type: ignore[union-attr]
    bad = await StateMatches().score(case, CaseRun("", state={"plan": "q"}))
    assert bad is not None and not bad.passed and bad.value == 0.0
    assert "plan:" in bad.reason and "files: unset" in bad.reason


@pytest.mark.parametrize(
    ("mode", "made", "passed", "value"),
    [
        ("exact", ["save", "review"], True, 1.0),
        ("exact", ["save", "lint", "review"], False, 0.5),
        ("in_order", ["save", "lint", "review"], True, 1.0),
        ("in_order", ["review", "save"], False, 0.5),
        ("any_order", ["review", "save"], True, 1.0),
        ("any_order", ["save"], False, 0.5),
    ],
)
async def test_trajectories_by_mode(mode: Any, made: list[str], passed: bool, value: float) -> None:
    case = Case(name="a", input="x", expected_tools=["save", "review"])
    score = await TrajectoryMatches(mode).score(case, CaseRun("", tool_calls=calls(*made)))
    assert score is not None and (score.passed, score.value) == (passed, value)


async def test_an_expected_calls_arguments_must_match_those_given() -> None:
    case = Case(
        name="a", input="x", expected_tools=[{"name": "save", "arguments": {"path": "a.py"}}]
    )
    right = CaseRun("", tool_calls=calls("save", save={"path": "a.py", "mode": "w"}))
    wrong = CaseRun("", tool_calls=calls("save", save={"path": "b.py"}))
    assert (await TrajectoryMatches().score(case, right)).passed  # type: ignore[union-attr]
    assert not (await TrajectoryMatches().score(case, wrong)).passed  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="mode"):
        TrajectoryMatches("fuzzy")  # type: ignore[arg-type]


async def test_plain_functions_score_as_bools_numbers_or_scores() -> None:
    case = Case(name="a", input="x")

    @scorer
    def short(case: Case, run: CaseRun) -> bool:
        return len(run.output or "") < 10

    @scorer(name="half")
    async def half(case: Case, run: CaseRun) -> float:
        return 0.5

    @scorer
    def bad(case: Case, run: CaseRun) -> Any:
        return float("nan")

    assert (await short.score(case, CaseRun("ok"))) == Score("short", True, 1.0)
    assert (await half.score(case, CaseRun("ok"))) == Score("half", False, 0.5)
    with pytest.raises(ConfigurationError, match="scorer 'bad' returned nan"):
        await bad.score(case, CaseRun("ok"))


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -0.5, 5, "high"], ids=["nan", "inf", "-0.5", "5", "text"]
)
def test_a_score_holds_a_value_from_0_to_1(value: Any) -> None:
    # a NaN made every mean NaN and the report's JSON invalid; a string broke `means()`
    with pytest.raises(ConfigurationError, match="Score 's': value must be a finite number"):
        Score("s", True, value)


def test_a_score_is_passed_or_not() -> None:
    with pytest.raises(ConfigurationError, match="passed must be a bool"):
        Score("s", "yes", 1.0)  # type: ignore[arg-type]


async def test_a_number_past_a_floats_range_is_no_score() -> None:
    @scorer
    def huge(case: Case, run: CaseRun) -> Any:
        return 10**400  # math.isfinite raised OverflowError on it

    with pytest.raises(ConfigurationError, match="scorer 'huge' returned a huge int"):
        await huge.score(Case(name="a", input="x"), CaseRun("ok"))
