"""Each case of a dataset as a pytest test.

    import pytest
    from network.evals import Dataset, check_case, case_params

    @pytest.mark.parametrize("case", case_params("evals/codegen.yaml"))
    async def test_codegen(case):
        await check_case(network, case)

`case_params` gives one `pytest.param` per case, its id the case's name (so `pytest -k add`
runs one case); `check_case` runs and scores it (`network.evals.runner.run_case`) and fails
the test with each failing score's reason. pytest is imported only by `case_params`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from network.errors import ConfigurationError
from network.evals.cases import Case, Dataset
from network.evals.report import CaseReport
from network.evals.runner import check_network, run_case
from network.evals.scorers import check_scorers, default_scorers
from network.network import Network
from network.numbers import check_number


def case_params(dataset: Dataset | str | Path) -> list[Any]:
    """One `pytest.param(case, id=case.name)` per case of `dataset` (a `Dataset` or a path)."""
    import pytest  # noqa: PLC0415 (only a test suite calls this)

    if not isinstance(dataset, Dataset | str | Path):  # else os.fspath's TypeError
        raise ConfigurationError(
            f"case_params: dataset must be a Dataset or a file's path, got {dataset!r:.100}"
        )
    loaded = dataset if isinstance(dataset, Dataset) else Dataset.load(dataset)
    return [pytest.param(case, id=case.name) for case in loaded.cases]


async def check_case(
    network: Network[Any],
    case: Case,
    scorers: Sequence[Any] | None = None,
    *,
    timeout_s: float | None = None,
) -> CaseReport:
    """Run and score `case`; an `AssertionError` with the reasons when it does not pass."""
    check_network("check_case", network)
    # as `evaluate` checks its own: a dict was an AttributeError, a NaN timeout the case's
    # "error" (anyio's ValueError) and a negative one its "timeout"
    if not isinstance(case, Case):
        raise ConfigurationError(f"check_case: case must be a Case, got {case!r:.100}")
    check_number("check_case: timeout_s", timeout_s, above=True, optional=True)
    chosen = check_scorers(default_scorers() if scorers is None else scorers)
    report = await run_case(network, case, chosen, timeout_s)
    if not report.passed:
        reasons = [f"{s.name}: {s.reason or 'failed'}" for s in report.scores if not s.passed]
        if report.error:
            reasons.insert(0, report.error)
        raise AssertionError(f"case {case.name!r} {report.status}: " + "; ".join(reasons))
    return report
