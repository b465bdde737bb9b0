"""The report as a table and as JSON, read back, and two reports compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from network import ConfigurationError
from network.evals import CaseReport, EvalReport, Score, compare


def report(statuses: dict[str, str]) -> EvalReport:
    cases = [
        CaseReport(name, status, [Score("output", status == "passed", float(status == "passed"))])
        for name, status in statuses.items()
    ]
    return EvalReport("d", "n", cases)


def test_a_report_round_trips_through_json(tmp_path: Path) -> None:
    before = report({"a": "passed", "b": "failed"})
    path = tmp_path / "before.json"
    path.write_text(before.to_json())
    again = EvalReport.load(path)
    assert again.to_dict() == before.to_dict()
    assert before.render().splitlines()[0] == "d on n: 1 of 2 passed"
    path.write_text('{"cases": 1}')
    with pytest.raises(ConfigurationError, match="not an evaluation report"):
        EvalReport.load(path)


@pytest.mark.parametrize(
    ("case", "said"),
    [
        (
            {
                "name": "a",
                "status": "passed",
                "scores": [{"name": "x", "passed": "no", "value": 0}],
            },
            "'passed' is str",
        ),  # was read as passed: bool("no") is True
        ({"name": "a", "status": "ok"}, "status 'ok' is none of"),
        ({"name": 5, "status": "passed"}, "'name' is int"),  # render() raised a TypeError
        ({"name": "a", "status": "passed", "tokens": True}, "'tokens' is bool"),
        ("a", "expected an object"),
    ],
)
def test_a_report_read_back_is_checked_field_by_field(
    tmp_path: Path, case: object, said: str
) -> None:
    path = tmp_path / "before.json"
    path.write_text(json.dumps({"dataset": "d", "network": "n", "cases": [case]}))
    with pytest.raises(ConfigurationError, match="not an evaluation report") as refused:
        EvalReport.load(path)
    assert said in str(refused.value)
    path.write_text(json.dumps({"dataset": "d", "network": "n", "cases": "abc"}))
    with pytest.raises(ConfigurationError, match="'cases' is str"):  # was an AttributeError
        EvalReport.load(path)


def test_two_reports_compared_say_what_broke_and_what_was_fixed() -> None:
    before = report({"a": "passed", "b": "failed", "c": "failed", "gone": "passed"})
    after = report({"a": "failed", "b": "passed", "c": "error", "new": "passed"})
    found = compare(before, after)
    assert (found.broke, found.fixed, found.still_failing) == (["a"], ["b"], ["c"])
    assert (found.added, found.removed) == (["new"], ["gone"])
    assert found.regressed and found.means == {"output": (0.5, 0.5)}
    text = found.render()
    assert "broke: a" in text and "fixed: b" in text and "output: 0.50 -> 0.50" in text
    assert not compare(before, before).regressed
    assert "no case changed" in compare(report({"a": "passed"}), report({"a": "passed"})).render()


def test_a_case_the_earlier_report_did_not_have_that_fails_is_a_regression() -> None:
    """A baseline tolerates the failures it knew of: before, a new case that failed counted
    as merely added, and `eval --against` exited 0 with it failing."""
    before = report({"a": "passed", "b": "failed"})
    found = compare(before, report({"a": "passed", "b": "failed", "new": "failed"}))
    assert (found.added, found.new_failing, found.regressed) == (["new"], ["new"], True)
    assert "new and failing: new" in found.render()
    assert found.to_dict()["newFailing"] == ["new"]
    passing = compare(before, report({"a": "passed", "b": "failed", "new": "passed"}))
    assert (passing.added, passing.new_failing, passing.regressed) == (["new"], [], False)


def test_a_lone_surrogate_in_a_run_is_written_as_utf8_and_read_back_the_same(
    tmp_path: Path,
) -> None:
    # A model's or a tool's text may hold a lone surrogate (JSON's "\ud800"): the report's
    # JSON and table were then no UTF-8, and `--out` or printing raised UnicodeEncodeError
    # once every case had run.
    said = "half \ud800 a pair"
    case = CaseReport("a", "failed", [Score("output", False, 0.0, f"said {said}")], said)
    before = EvalReport("d", "n", [case])
    path = tmp_path / "report.json"
    path.write_text(before.to_json(), encoding="utf-8")
    assert "\\ud800" in path.read_text(encoding="utf-8")
    assert EvalReport.load(path).to_dict() == before.to_dict()
    assert "half \ufffd a pair" in before.render().encode("utf-8").decode("utf-8")
    named = EvalReport("d", "n", [CaseReport("b\udfff", "failed")])
    assert "b\ufffd" in compare(before, named).render().encode("utf-8").decode("utf-8")
