"""Each case a pytest test: `case_params` gives one param per case, `check_case` fails the
test with the reasons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from network import ConfigurationError
from network.evals import Case, Dataset, case_params, check_case
from tests.network.capabilities.replay.teams import TASK, codegen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

DATASET = Dataset(
    name="codegen",
    cases=[
        Case(
            name="add", input=TASK, expected_output="Approved.", expected_tools=["save", "review"]
        ),
        Case(name="plan", input=TASK, expected_state={"plan": "1. add.py\n2. test_add.py"}),
    ],
)


@pytest.mark.parametrize("case", case_params(DATASET))
async def test_each_case_is_a_test(case: Case) -> None:
    report = await check_case(codegen(), case)
    assert report.passed


def test_params_come_from_a_file_with_the_cases_names_as_ids(tmp_path: Path) -> None:
    path = tmp_path / "codegen.yaml"
    DATASET.save(path)
    assert [param.id for param in case_params(path)] == ["add", "plan"]


async def test_a_failing_case_fails_with_its_reasons() -> None:
    case = Case(name="wrong", input=TASK, expected_output="Rejected.")
    with pytest.raises(AssertionError, match="case 'wrong' failed: output: output 'Approved.'"):
        await check_case(codegen(), case)


@pytest.mark.parametrize(
    ("case", "options", "said"),
    [
        # an AttributeError ('dict' object has no attribute 'limits')
        ({"name": "a", "input": TASK}, {}, r"^check_case: case must be a Case, got \{"),
        # the case's "error" (anyio's ValueError: deadline must not be NaN)
        (DATASET.cases[0], {"timeout_s": float("nan")}, r"^check_case: timeout_s must be"),
        # the case's "timeout: ran past -1 s" before it ran
        (DATASET.cases[0], {"timeout_s": -1}, r"^check_case: timeout_s must be"),
    ],
)
async def test_check_case_refuses_what_is_no_case_or_time_as_evaluate_does(
    case: Any, options: dict[str, Any], said: str
) -> None:
    with pytest.raises(ConfigurationError, match=said):
        await check_case(codegen(), case, **options)


def test_case_params_of_what_is_no_dataset_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"^case_params: dataset must be a Dataset"):
        case_params(42)  # type: ignore[arg-type]  # os.fspath's TypeError before
