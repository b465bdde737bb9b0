"""`evaluate`: every case run on the codegen team, scored, concurrently under a budget, each
within its own limits and time."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, ModelError, Network
from network.evals import Case, CaseLimits, Dataset, Score, Scorer, check_case, evaluate, scorer
from tests.network.capabilities.replay.teams import TASK, Counts, codegen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

PLAN = "1. add.py\n2. test_add.py"


def good(name: str = "add") -> Case:
    return Case(
        name=name,
        input=TASK,
        expected_output="Approved.",
        expected_state={"plan": PLAN},
        expected_tools=["save", "review"],
    )


async def test_cases_pass_and_fail_by_their_scores_with_the_reason() -> None:
    wrong = Case.model_validate(
        {**good("wrong").model_dump(), "expected_output": "Rejected.", "expected_tools": ["deploy"]}
    )
    report = await evaluate(codegen(), Dataset(name="d", cases=[good(), wrong]))
    add, failed = report.cases
    assert (add.status, [s.name for s in add.scores]) == (
        "passed",
        ["output", "state", "trajectory"],
    )
    assert add.output == "Approved." and add.tokens > 0 and add.stop_reason == "router_finished"
    assert failed.status == "failed"
    verdicts = {s.name: s.passed for s in failed.scores}
    assert verdicts == {"output": False, "state": True, "trajectory": False}
    assert "trajectory: tool calls made: save, review" in report.render()
    assert report.passed == 1 and not report.all_passed
    assert report.to_dict()["means"] == {"output": 0.5, "state": 1.0, "trajectory": 0.5}


async def test_a_cases_limits_stop_its_run_and_fail_it() -> None:
    capped = good("capped").model_copy(update={"limits": CaseLimits(max_model_calls=1)})
    few = good("few").model_copy(update={"limits": CaseLimits(max_agent_calls=2)})
    counts = Counts()
    report = await evaluate(codegen(counts), Dataset(name="d", cases=[capped, few]))
    assert report.case("capped").status == "limit"
    assert "max_model_calls=1" in (report.case("capped").error or "")
    few_report = report.case("few")  # stopped after two agent calls
    assert (few_report.status, few_report.stop_reason) == ("limit", "max_iter")


def slow_network(seconds: float, running: list[int] | None = None) -> Network:
    async def answer(request: Any) -> str:
        if running is not None:
            running[0] += 1
            running[1] = max(running[1], running[0])
        await anyio.sleep(seconds)
        if running is not None:
            running[0] -= 1
        return "done"

    return Network("slow", agents=[Agent("slow", model=ScriptedModel(answer))])


async def test_a_case_past_its_time_is_a_timeout_and_the_others_go_on() -> None:
    late = Case(name="late", input="x", limits=CaseLimits(timeout_s=0.05))
    fine = Case(name="fine", input="x", expected_output="done")
    report = await evaluate(slow_network(0.3), Dataset(name="d", cases=[late, fine]), timeout_s=5)
    assert [(c.name, c.status) for c in report.cases] == [("late", "timeout"), ("fine", "passed")]
    assert report.case("late").error == "ran past 0.05 s"


async def test_a_timeout_error_the_run_raises_is_its_error_not_its_time_running_out() -> None:
    # A model (or its HTTP client) timing out raises TimeoutError itself: before, that was
    # taken for the case's time running out ("ran past 5 s"), and with no time set the
    # report's line could not be written and the whole evaluation raised.
    timing_out = ScriptedModel([TimeoutError("read timed out")] * 2)
    network = Network("t", agents=[Agent("t", model=timing_out)])
    dataset = Dataset(name="d", cases=[Case(name="a", input="x")])
    for timeout_s in (None, 5):
        report = await evaluate(network, dataset, timeout_s=timeout_s)
        assert [(c.status, c.error) for c in report.cases] == [
            ("error", "TimeoutError: read timed out")
        ]


async def test_cases_run_concurrently_up_to_the_limit() -> None:
    running = [0, 0]
    cases = [Case(name=f"c{n}", input="x") for n in range(6)]
    report = await evaluate(
        slow_network(0.05, running), Dataset(name="d", cases=cases), concurrency=2
    )
    assert running[1] == 2 and report.passed == 6


async def test_cases_after_the_budget_is_spent_are_skipped() -> None:
    cases = [good(f"c{n}") for n in range(3)]
    report = await evaluate(codegen(), Dataset(name="d", cases=cases), concurrency=1, max_tokens=1)
    assert [c.status for c in report.cases] == ["passed", "skipped", "skipped"]
    assert report.cases[1].error == "the budget of 1 tokens was spent"


async def test_a_failing_run_and_a_failing_scorer_are_reported_not_raised() -> None:
    broken = Network("b", agents=[Agent("b", model=ScriptedModel([ModelError("provider down")]))])
    report = await evaluate(broken, Dataset(name="d", cases=[Case(name="a", input="x")]))
    assert report.cases[0].status == "error"
    assert report.cases[0].error == "ModelError: provider down"

    @scorer
    def crashes(case: Case, run: Any) -> bool:
        return 1 / 0 > 0

    report = await evaluate(codegen(), Dataset(name="d", cases=[good()]), scorers=[crashes])
    [score] = report.cases[0].scores
    assert (score.passed, score.reason) == (False, "the scorer raised ZeroDivisionError")


async def test_a_scorer_that_returns_no_verdict_says_what_it_returned() -> None:
    @scorer
    def wrong(case: Case, run: Any) -> Any:
        return Score("wrong", True, float("nan"))  # refused where it is made

    @scorer
    def above(case: Case, run: Any) -> Any:
        return 2

    report = await evaluate(codegen(), Dataset(name="d", cases=[good()]), scorers=[wrong, above])
    reasons = [score.reason for score in report.cases[0].scores]
    assert reasons == [
        "Score 'wrong': value must be a finite number >= 0 and <= 1, got nan",
        "scorer 'above' returned 2: return a bool, a number from 0 to 1, a Score or None",
    ]
    assert not report.all_passed and "NaN" not in report.to_json()


async def test_bad_options_are_refused_by_name() -> None:
    dataset = Dataset(name="d", cases=[good()])
    for options, said in (
        ({"concurrency": 0}, "concurrency"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"timeout_s": float("nan")}, "timeout_s"),
        ({"scorers": [42]}, "42 is not a Scorer"),
    ):
        with pytest.raises(ConfigurationError, match=said):
            await evaluate(codegen(), dataset, **options)
    with pytest.raises(ConfigurationError, match="Dataset"):
        await evaluate(codegen(), [good()])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (None, r"^evaluate: network must be a Network, got NoneType$"),
        ("app.py:network", r"^evaluate: network must be a Network, got str$"),
        (
            Agent("coder", model=ScriptedModel(["x"])),
            r"^evaluate: network must be a Network, got Agent: give Network\('coder', ",
        ),
    ],
)
async def test_what_is_not_a_network_is_refused_before_any_case_runs(given: Any, said: str) -> None:
    # Before, every case was reported as an error of its own: an agent's "TypeError:
    # Agent.run() got an unexpected keyword argument 'limits'", an AttributeError for None.
    dataset = Dataset(name="d", cases=[good()])
    with pytest.raises(ConfigurationError, match=said):
        await evaluate(given, dataset)
    with pytest.raises(ConfigurationError, match=said.replace("evaluate", "check_case")):
        await check_case(given, good())


class Answers(Scorer):
    """A scorer of one's own that answers `said`, not a `Score`."""

    name = "own"

    def __init__(self, said: Any) -> None:
        self.said = said

    async def score(self, case: Case, run: Any) -> Any:
        return self.said


async def test_a_scorer_object_answering_no_score_fails_its_case_not_the_evaluation() -> None:
    # Before, `Score.passed` of True was an AttributeError out of the task group: the whole
    # evaluation raised an ExceptionGroup and every case's report was lost.
    dataset = Dataset(name="d", cases=[good("a"), good("b")])
    report = await evaluate(codegen(), dataset, scorers=[Answers(True)])
    assert [(c.status, [s.reason for s in c.scores]) for c in report.cases] == [
        ("failed", ["the scorer returned a bool, not a Score or None"])
    ] * 2
    with pytest.raises(AssertionError, match="the scorer returned a str, not a Score"):
        await check_case(codegen(), good(), [Answers("yes")])


@pytest.mark.parametrize(
    ("scorers", "said"),
    [
        ([Answers(True), Answers(True)], "two scorers are named 'own'"),
        ([type("Nameless", (Answers,), {"name": None})(True)], "needs a non-blank name, got None"),
        ([type("Blank", (Answers,), {"name": " "})(True)], "needs a non-blank name, got ' '"),
        (Answers(True), "scorers must be a list of scorers"),
        ("output", "scorers must be a list of scorers"),
    ],
)
async def test_scorers_without_a_usable_name_are_refused_before_any_case_runs(
    scorers: Any, said: str
) -> None:
    # A scorer named None made a `Score` named None: a ConfigurationError out of the task
    # group after the first case ran, ending the evaluation.
    counts = Counts()
    with pytest.raises(ConfigurationError, match=said):
        await evaluate(codegen(counts), Dataset(name="d", cases=[good()]), scorers=scorers)
    assert counts == Counts()
