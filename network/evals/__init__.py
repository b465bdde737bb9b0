"""Evaluate a network on a dataset of cases (docs/evals.md).

    dataset = Dataset.load("evals/codegen.yaml")
    report = await evaluate(network, dataset, concurrency=4)
    print(report.render())

Cases and their file format (`cases`), scorers (`scorers`, `judge`), the runner (`runner`), its
report and the comparison of two (`report`), stored threads as cases (`export`), and each case
as a pytest test (`testing`).
"""

from network.evals.cases import Case, CaseLimits, Dataset, DatasetError, ExpectedToolCall
from network.evals.export import case_from_thread, case_of, dataset_from_threads
from network.evals.judge import LLMJudge
from network.evals.report import CaseReport, Comparison, EvalReport, compare
from network.evals.runner import evaluate, run_case
from network.evals.scorers import (
    CaseRun,
    FunctionScorer,
    OutputContains,
    OutputEquals,
    Score,
    Scorer,
    StateMatches,
    TrajectoryMatches,
    default_scorers,
    scorer,
)
from network.evals.testing import case_params, check_case

__all__ = [
    "Case",
    "CaseLimits",
    "CaseReport",
    "CaseRun",
    "Comparison",
    "Dataset",
    "DatasetError",
    "EvalReport",
    "ExpectedToolCall",
    "FunctionScorer",
    "LLMJudge",
    "OutputContains",
    "OutputEquals",
    "Score",
    "Scorer",
    "StateMatches",
    "TrajectoryMatches",
    "case_from_thread",
    "case_of",
    "case_params",
    "check_case",
    "compare",
    "dataset_from_threads",
    "default_scorers",
    "evaluate",
    "run_case",
    "scorer",
]
