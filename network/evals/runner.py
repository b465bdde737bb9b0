"""`evaluate`: run a network on every case of a dataset, concurrently, and score each run.

Each case is one run of the network, on a fresh state (the case's `state`), with no thread:
its usage limits and agent calls capped by the case's `limits`, its time by `timeout_s` (the
case's, else the evaluation's). `concurrency` cases run at once. `max_tokens` is the
dataset's budget: once the cases finished so far spent it, the cases not yet started are
reported `skipped` (a case under way is not stopped: its own limits bound it).

A scorer that raises fails its score (the reason names the exception's type); a run that
raises is the case's `error`, with the exception's type and message (this is your code, on
your machine: the message is yours to read).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anyio

from network.errors import ConfigurationError
from network.evals.cases import Case, Dataset
from network.evals.report import (
    ERROR,
    FAILED,
    LIMIT,
    PASSED,
    SKIPPED,
    TIMEOUT,
    CaseReport,
    EvalReport,
)
from network.evals.scorers import CaseRun, Score, Scorer, check_scorers, default_scorers
from network.network import Network
from network.numbers import check_number
from network.run.result import StopReason

MAX_ERROR = 500  # characters of a run's error kept in the report


def case_run(result: Any) -> CaseRun:
    """What a `RunResult` did, as the scorers read it."""
    results = list(result.state.results)
    value = results[-1].output_value if results else None
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    return CaseRun(
        result.output,
        value,
        result.state.snapshot(),
        [record for call in results for record in call.tool_calls],
        [call.agent for call in results],
        result.usage,
        str(result.stop_reason),
        result,
    )


async def score_case(case: Case, run: CaseRun, scorers: Sequence[Scorer]) -> list[Score]:
    """Every applicable scorer's verdict on the run of `case`."""
    scores: list[Score] = []
    for scorer in scorers:
        try:
            score = await scorer.score(case, run)
        except ConfigurationError as exc:  # it returned what is no verdict: say what
            score = Score(scorer.name, False, 0.0, str(exc)[:MAX_ERROR])
        except Exception as exc:  # a scorer's bug fails its score, not the evaluation
            score = Score(scorer.name, False, 0.0, f"the scorer raised {type(exc).__name__}")
        if score is not None and not isinstance(score, Score):
            # A `Scorer` of one's own answering True: its `.passed` was an AttributeError
            # that ended the whole evaluation (every case's report lost) or `check_case`.
            shown = type(score).__name__
            score = Score(
                scorer.name, False, 0.0, f"the scorer returned a {shown}, not a Score or None"
            )
        if score is not None:
            scores.append(score)
    return scores


def check_network(where: str, given: object) -> None:
    """`given` is a `Network`, or a `ConfigurationError` naming `where` (else every case was
    an error of its own, an agent's `TypeError` about `limits=` or an `AttributeError`)."""
    if isinstance(given, Network):
        return
    name = getattr(given, "name", None)
    hint = (
        f": give Network({name!r}, agents=[...]) holding it"
        if callable(getattr(given, "call", None)) and isinstance(name, str)
        else ""
    )
    raise ConfigurationError(
        f"{where}: network must be a Network, got {type(given).__name__}{hint}"
    )


async def run_case(
    network: Network[Any], case: Case, scorers: Sequence[Scorer], timeout_s: float | None = None
) -> CaseReport:
    """Run and score one case (see the module docstring)."""
    started = time.perf_counter()
    limits = case.limits
    timeout = limits.timeout_s if limits is not None and limits.timeout_s else timeout_s
    report = CaseReport(case.name, FAILED)
    result = None
    try:
        # Not `fail_after`: its TimeoutError is the one a run raises itself (a model or a
        # tool timing out), which is the case's error, not its time running out.
        with anyio.move_on_after(timeout) as scope:
            result = await network.run(
                case.input,
                state=case.state or None,
                limits=None if limits is None else limits.usage_limits(),
                max_iter=None if limits is None else limits.max_agent_calls,
            )
    except Exception as exc:
        partial = getattr(exc, "partial_result", None)
        report.status = ERROR
        report.error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
        if partial is not None:
            report.output, report.tokens = partial.output, partial.usage.total_tokens
    else:
        if result is None or scope.cancel_called:
            report.status, report.error = TIMEOUT, f"ran past {timeout:g} s"
        else:
            await _score(report, case, result, scorers)
    report.duration_ms = (time.perf_counter() - started) * 1000
    return report


async def _score(report: CaseReport, case: Case, result: Any, scorers: Sequence[Scorer]) -> None:
    """Fill `report` in from the run's `result` and the scorers' verdicts on it."""
    run = case_run(result)
    report.output, report.stop_reason = result.output, run.stop_reason
    report.tokens = result.usage.total_tokens
    report.scores = await score_case(case, run, scorers)
    if result.stop_reason == StopReason.USAGE_LIMIT:
        report.status, report.error = LIMIT, str(result.limit_exceeded)
    elif result.stop_reason == StopReason.MAX_ITER:
        report.status, report.error = LIMIT, "reached its most agent calls"
    elif all(score.passed for score in report.scores):
        report.status = PASSED


async def evaluate(
    network: Network[Any],
    dataset: Dataset,
    *,
    scorers: Sequence[Any] | None = None,
    concurrency: int = 4,
    max_tokens: int | None = None,
    timeout_s: float | None = None,
) -> EvalReport:
    """Run `network` on every case of `dataset` and score the runs.

    Args:
        network: the `Network` evaluated.
        dataset: the cases (`Dataset`, or `Dataset.load(path)`).
        scorers: what the runs are scored with (`Scorer`s, or plain functions `fn(case,
            run)`); default: `default_scorers()` (output, state, trajectory in order).
        concurrency: how many cases run at once (at least 1).
        max_tokens: the dataset's token budget (see the module docstring); None: no budget.
        timeout_s: each case's time, unless its `limits.timeout_s` says otherwise.
    """
    check_network("evaluate", network)
    if not isinstance(dataset, Dataset):
        raise ConfigurationError(f"evaluate: dataset must be a Dataset, got {dataset!r}")
    check_number("evaluate: concurrency", concurrency, integer=True, minimum=1)
    check_number("evaluate: max_tokens", max_tokens, integer=True, optional=True)
    check_number("evaluate: timeout_s", timeout_s, above=True, optional=True)
    chosen = check_scorers(default_scorers() if scorers is None else scorers)
    started = time.perf_counter()
    reports: list[CaseReport | None] = [None] * len(dataset.cases)
    spent = 0
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(index: int, case: Case) -> None:
        nonlocal spent
        async with limiter:
            if max_tokens is not None and spent >= max_tokens:
                reports[index] = CaseReport(
                    case.name, SKIPPED, error=f"the budget of {max_tokens} tokens was spent"
                )
                return
            report = await run_case(network, case, chosen, timeout_s)
            spent += report.tokens
            reports[index] = report

    async with anyio.create_task_group() as group:
        for index, case in enumerate(dataset.cases):
            group.start_soon(one, index, case)
    done = [report for report in reports if report is not None]
    return EvalReport(
        dataset.name,
        getattr(network, "name", "network"),
        done,
        (time.perf_counter() - started) * 1000,
    )
