"""`agent-network eval FILE:NETWORK DATASET`: run a network on a dataset and score it.

    agent-network eval app.py:network evals/codegen.yaml
    agent-network eval app.py:network evals/codegen.yaml --out after.json --against before.json

Prints the report as a table (or JSON with `--json`); `--out FILE` saves it as JSON, and
`--against FILE` compares it with a report saved before (fixed, broke, each scorer's mean).
Exit status: 0 when every case passed, 1 when one did not (or, with `--against`, when a case
that passed before fails now, or a case the earlier report did not have fails), 2 for a bad
argument or dataset (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio

from network.cli.load import CLIError, load_network
from network.errors import ConfigurationError


def add_eval_parser(commands: Any) -> None:
    """The `eval` command's arguments."""
    evaluate = commands.add_parser("eval", help="run a network on a dataset of cases, scored")
    evaluate.add_argument("target", metavar="FILE:NETWORK")
    evaluate.add_argument("dataset", help="the dataset: a .yaml, .yml or .json file")
    evaluate.add_argument("--concurrency", type=int, default=4, help="cases at once (default 4)")
    evaluate.add_argument(
        "--max-tokens", type=int, help="the dataset's token budget: later cases are skipped"
    )
    evaluate.add_argument("--timeout", type=float, help="seconds per case (a case's own wins)")
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument("--out", metavar="FILE", help="save the report as JSON")
    evaluate.add_argument("--against", metavar="FILE", help="compare with a saved report")


def cmd_eval(args: argparse.Namespace) -> int:
    """Evaluate, print, save and compare; 0 when every case passed."""
    from network.evals import Dataset, EvalReport, compare, evaluate  # noqa: PLC0415 (pydantic)
    from network.evals.report import json_text  # noqa: PLC0415 (as the line above)

    network = load_network(args.target)
    if args.out:  # before the cases run (and spend): a report it cannot save was a traceback
        _check_out(Path(args.out))
    try:
        dataset = Dataset.load(args.dataset)
        before = EvalReport.load(args.against) if args.against else None

        async def main() -> EvalReport:
            return await evaluate(
                network,
                dataset,
                concurrency=args.concurrency,
                max_tokens=args.max_tokens,
                timeout_s=args.timeout,
            )

        report = anyio.run(main)
    except ConfigurationError as exc:
        raise CLIError(str(exc)) from None
    saved = None
    if args.out:
        try:
            Path(args.out).write_text(report.to_json() + "\n", encoding="utf-8")
        except OSError as exc:  # the directory went away while the cases ran, say
            saved = f"error: --out: cannot save the report: {exc.strerror or exc}"
    comparison = None if before is None else compare(before, report)
    if args.json:
        data = report.to_dict()
        if comparison is not None:
            data["comparison"] = comparison.to_dict()

        print(json_text(data))
    else:
        print(report.render())
        if comparison is not None:
            print(comparison.render())
    if saved is not None:  # after the report, which is printed all the same
        print(saved, file=sys.stderr)
        return 2
    if comparison is not None:
        return 1 if comparison.regressed else 0
    return 0 if report.all_passed else 1


def _check_out(out: Path) -> None:
    """`--out`'s file can be written: its directory exists and it is not a directory."""
    if out.is_dir():
        raise CLIError(f"--out: {out} is a directory; name the report's file")
    if not out.parent.is_dir():
        raise CLIError(f"--out: no such directory: {out.parent}")
