"""pydantic-evals (the real package) scores our runs: its span-based evaluators read the
OpenTelemetry GenAI spans our runs make, and our dataset becomes theirs. In a process of its
own, because pydantic-evals reads the global tracer provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError
from network.evals.ecosystem import network_task, to_pydantic_evals

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from pydantic_evals.evaluators import EqualsExpected, HasMatchingSpan, MaxToolCalls

trace.set_tracer_provider(TracerProvider())  # what pydantic-evals asks for its span tree

from network.evals import Case, Dataset
from network.evals.ecosystem import network_task, to_pydantic_evals
from tests.network.capabilities.replay.teams import TASK, codegen

ours = Dataset(
    name="codegen",
    cases=[
        Case(
            name="add", input=TASK, expected_output="Approved.", expected_tools=["save", "review"]
        )
    ],
)
theirs = to_pydantic_evals(
    ours,
    evaluators=[
        HasMatchingSpan(query={"name_equals": "execute_tool save"}, evaluation_name="saved"),
        HasMatchingSpan(query={"name_equals": "execute_tool deploy"}, evaluation_name="deployed"),
        MaxToolCalls(max_calls=2),
        EqualsExpected(),
    ],
)
verdicts = {}
for label, network in (("same", codegen()), ("reordered", codegen(reviewer_first=True))):
    report = theirs.evaluate_sync(network_task(network), progress=False)
    [case] = report.cases
    verdicts[label] = {
        "assertions": {name: result.value for name, result in case.assertions.items()},
        "scores": {name: result.value for name, result in case.scores.items()},
        "output": case.output,
    }
print("VERDICTS " + json.dumps(verdicts))
"""


def test_pydantic_evals_span_evaluators_score_our_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    line = next(text for text in done.stdout.splitlines() if text.startswith("VERDICTS "))
    verdicts = json.loads(line.removeprefix("VERDICTS "))
    same = verdicts["same"]
    assert same["output"] == "Approved."
    assert same["assertions"] == {
        "saved": True,
        "deployed": False,
        "MaxToolCalls": True,
        "EqualsExpected": True,
    }
    assert same["scores"] == {"TrajectoryMatch": 1.0}  # our expected_tools, their evaluator
    reordered = verdicts["reordered"]  # the reviewer first: review, then save
    assert reordered["assertions"]["saved"] is True
    assert reordered["scores"]["TrajectoryMatch"] < 1.0


def test_what_is_no_network_or_dataset_is_refused_by_name() -> None:
    # Before, an AttributeError ('NoneType' object has no attribute 'name'; 'list' object
    # has no attribute 'cases'), and an agent alone was taken, each case then its error.
    for given, said in ((None, "got NoneType"), (Agent("a", model=ScriptedModel([])), "Agent")):
        with pytest.raises(ConfigurationError, match=rf"^network_task: .*{said}"):
            network_task(given)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"^to_pydantic_evals: dataset must be a Dataset"):
        to_pydantic_evals([1])  # type: ignore[arg-type]
