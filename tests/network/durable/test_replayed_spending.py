"""What a resumed durable run spent before its crash is what it had: the summary its context
policy made is the recorded one (the summariser's model is not called again), and an LLM
router's token usage of replayed decisions counts in the resumed run's totals."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.network.durable.gaps_network import SEQUENCE, team
from tests.network.durable.harness import expected_log, finish, kill_when_ready, spawn

CHILD = "tests.network.durable.gaps_child"
SUMMARISED_WRITE = SEQUENCE.index("summariser-model") + 2  # 1-based: the write after it
SECOND_WRITE = 4  # 1-based: the writer's second model call (two router decisions before it)
assert SEQUENCE[SUMMARISED_WRITE - 1] == SEQUENCE[SECOND_WRITE - 1] == "writer-model"


def crash_once(db: str, log: Path, kill_at: int) -> dict[str, Any]:
    """Run `gaps_network` durably, kill it in the `kill_at`-th call, resume it to its end."""
    run_id = f"run_{uuid.uuid4().hex[:10]}"
    kill_when_ready(spawn(["-m", CHILD, db, run_id, "run"], log, kill_at), log)
    finish(spawn(["-m", CHILD, db, run_id, "resume"], log, None))
    outcome: dict[str, Any] = json.loads(Path(f"{log}.result").read_text())
    return outcome


def effects(log: Path) -> list[tuple[str, str]]:
    return [tuple(line.split(" ", 1)) for line in log.read_text().splitlines()]  # type: ignore[misc]


def uncrashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The same run, plain and in this process (its effects go to a log of its own)."""
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "plain.log"))
    return team.run_sync("go")


def usage_of(result: Any) -> dict[str, int]:
    usage = result.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


def test_a_replayed_summary_is_the_recorded_one_and_its_model_runs_once(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_once(durable_db, log, SUMMARISED_WRITE)
    done = effects(log)
    assert [kind for kind, _ in done] == expected_log(SEQUENCE, [SUMMARISED_WRITE])
    summaries = [seen for kind, seen in done if kind == "summariser-model"]
    assert len(summaries) == 1  # recorded before the kill: replayed, not made again
    nonce = summaries[0]
    third = [seen for kind, seen in done if kind == "writer-model" and seen.startswith("call 3")]
    assert len(third) == 2  # the call in flight ran again (at least once) ...
    assert all(seen.endswith(f"summary={nonce}") for seen in third)  # ... with that summary
    assert outcome["status"] == "SUCCESS"
    assert outcome["output"].endswith(f"summary={nonce}")
    assert outcome["usage"] == usage_of(uncrashed(tmp_path, monkeypatch))


@pytest.mark.parametrize("durable_db", ["sqlite"], indirect=True)  # PostgreSQL: the test above
def test_a_resumed_run_counts_the_router_usage_of_its_replayed_decisions(
    durable_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "effects.log"
    outcome = crash_once(durable_db, log, SECOND_WRITE)
    done = effects(log)
    assert [kind for kind, _ in done] == expected_log(SEQUENCE, [SECOND_WRITE])
    # the writer's call in flight ran again, seeing the router's two replayed decisions (their
    # tokens in ctx.engine.router_usage, their requests in ctx.engine.router_calls)
    assert [seen for kind, seen in done if kind == "writer-model"][1:3] == [
        "call 2 router_tokens=220 (2) summary=-",
        "call 2 router_tokens=220 (2) summary=-",
    ]
    plain = uncrashed(tmp_path, monkeypatch)
    assert plain.output.startswith("call 3 router_tokens=330 (3) summary=")
    assert outcome["output"].startswith("call 3 router_tokens=330 (3) summary=")
    assert outcome["usage"] == usage_of(plain)
