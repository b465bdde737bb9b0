"""`agent-network dev --reload`: the network's file edited while the dev server runs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx

from tests.network.cli.dev_process import dev_server

ROOT = Path(__file__).resolve().parents[3]
http = httpx.Client(timeout=60)
RELOAD_ON_ANY_PORT = ["--port", "0", "--reload"]

ONE_AGENT = """
from agents import Agent, ScriptedModel
from network import Network


def route(ctx):
    return None if ctx.call_count >= 1 else ctx.network.agents["first"]


first = Agent("first", model=ScriptedModel(lambda r: "one"), output_key="said")
network = Network("reloadable", agents=[first], router=route, state_schema={"said": {"type": str}})
"""

TWO_AGENTS = """
from agents import Agent, ScriptedModel
from network import Network

ORDER = ["first", "second"]


def route(ctx):
    if ctx.call_count >= len(ORDER):
        return None
    return ctx.network.agents[ORDER[ctx.call_count]]


first = Agent("first", model=ScriptedModel(lambda r: "one"), output_key="said")
second = Agent("second", model=ScriptedModel(lambda r: "two"), output_key="said")
SCHEMA = {"said": {"type": str}}
network = Network("reloadable", agents=[first, second], router=route, state_schema=SCHEMA)
"""


def agents(url: str) -> list[str]:
    graph = http.get(url + "/api/graph").json()
    return [node["agent"] for node in graph["nodes"] if node["agent"]]


def run(url: str, thread_id: str, text: str) -> list[dict[str, Any]]:
    body = {
        "threadId": thread_id,
        "runId": f"run-{time.monotonic_ns()}",
        "messages": [{"id": f"m-{time.monotonic_ns()}", "role": "user", "content": text}],
    }
    answer = http.post(url + "/agui/", json=body)
    assert answer.status_code == 200, answer.text
    frames = [f for f in answer.text.split("\n\n") if f.startswith("data: ")]
    return [json.loads(frame[len("data: ") :]) for frame in frames]


def write(path: Path, text: str) -> None:
    path.write_text(text)
    # a later modification time than the first version's, even on a coarse clock
    later = time.time_ns() + 2_000_000_000
    os.utime(path, ns=(later, later))


def test_dev_reload_serves_the_edited_network_and_keeps_the_threads(tmp_path: Path) -> None:
    source = tmp_path / "flow.py"
    source.write_text(ONE_AGENT)
    with dev_server(f"{source}:network", *RELOAD_ON_ANY_PORT, name="reloadable") as (
        url,
        process,
    ):
        assert agents(url) == ["first"]
        first_run = run(url, "kept", "hello")
        assert [e["stepName"] for e in first_run if e["type"] == "STEP_STARTED"] == ["first"]

        write(source, TWO_AGENTS)
        assert agents(url) == ["first", "second"]  # the next request sees the new network
        second_run = run(url, "kept", "again")
        snapshot = next(e for e in second_run if e["type"] == "STATE_SNAPSHOT")
        assert snapshot["snapshot"]["said"] == "one"  # the thread of before the reload
        steps = [e["stepName"] for e in second_run if e["type"] == "STEP_STARTED"]
        assert steps == ["first", "second"]

        write(source, TWO_AGENTS + "\ndef broken(:\n")
        assert agents(url) == ["first", "second"]  # a broken edit: the last good one serves
        assert http.get(url + "/").status_code == 200
    assert process.stderr is not None
    errors = process.stderr.read()
    assert f"reloaded 'reloadable' from {source}" in errors
    assert "reload failed, still serving the last network: importing" in errors
    assert "SyntaxError" in errors
