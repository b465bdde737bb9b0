"""`LLMJudge`: any model judges a run against a rubric; its answer is hostile model output."""

from __future__ import annotations

import pytest

from agents import ScriptedModel
from network import ConfigurationError, ModelError
from network.evals import Case, CaseRun, LLMJudge

pytestmark = pytest.mark.anyio

CASE = Case(name="a", input="Write add(a, b).", expected_output="def add(a, b): ...")


async def test_the_judge_is_sent_the_input_output_expectation_and_rubric() -> None:
    model = ScriptedModel(['```json\n{"pass": true, "reason": "adds", "score": 0.9}\n```'])
    score = await LLMJudge(model, "The code adds two numbers.").score(CASE, CaseRun("def add"))
    assert score is not None and (score.name, score.passed, score.value) == ("judge", True, 0.9)
    assert score.reason == "adds"
    [request] = model.requests
    sent = request.history[0].content
    assert "Input:\nWrite add(a, b)." in sent and "Output:\ndef add" in sent
    assert "Expected output:\ndef add(a, b): ..." in sent
    assert sent.endswith("Rubric:\nThe code adds two numbers.")
    assert '"pass"' in request.system[0].content


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("Looks good to me!", "not a verdict"),
        ('{"pass": "yes"}', "not a verdict"),
        ('{"pass": true, "score": 7}', "not a number from 0 to 1"),
        ('{"pass": true, "score": NaN}', "not a number from 0 to 1: nan"),
        ('{"pass": true, "score": 1' + "0" * 400 + "}", "not a number from 0 to 1: huge"),
        ("{not json}", "not a verdict"),
    ],
)
async def test_an_answer_that_is_not_a_verdict_fails_the_case(answer: str, said: str) -> None:
    score = await LLMJudge(ScriptedModel([answer]), "rubric").score(CASE, CaseRun("x"))
    assert score is not None and not score.passed and said in score.reason


@pytest.mark.parametrize(
    "answer",
    [
        'Verdict: {"pass": true, "reason": "adds"}. Note: {x} is a placeholder.',
        'I checked {the output}. {"pass": true, "reason": "adds"}',
        '{"pass": true, "reason": "adds"}\n{"pass": false, "reason": "second thoughts"}',
    ],
)
async def test_the_verdict_is_read_among_other_text(answer: str) -> None:
    # the object was taken from the first "{" to the last "}": no JSON, and the case failed
    score = await LLMJudge(ScriptedModel([answer]), "rubric").score(CASE, CaseRun("x"))
    assert score is not None and (score.passed, score.reason) == (True, "adds")


async def test_a_failing_judge_fails_the_case_naming_the_error() -> None:
    judge = LLMJudge(ScriptedModel([ModelError("down")]), "rubric", name="quality")
    score = await judge.score(CASE, CaseRun("x"))
    assert score is not None and (score.name, score.passed) == ("quality", False)
    assert score.reason == "the judge failed: ModelError"


def test_a_judge_needs_a_model_and_a_rubric() -> None:
    with pytest.raises(ConfigurationError, match="not a model"):
        LLMJudge("gpt", "rubric")
    with pytest.raises(ConfigurationError, match="rubric"):
        LLMJudge(ScriptedModel([]), " ")
