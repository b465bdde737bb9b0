"""`agent-network replay`: a thread recorded in an SQLite file replayed by the command line,
as a user would, through `main()` (test_main.py drives the entry point as a process)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from network import ThreadRef
from tests.network.capabilities.replay.teams import TASK, codegen
from tests.network.cli.test_main import cli_main as cli

NETWORKS = "tests/network/cli/replay_networks.py"


def record(path: Path) -> str:
    """The codegen team's run recorded on thread t1 of an SQLite file."""
    database = str(path / "threads.db")

    async def main() -> None:
        await codegen().run(TASK, thread=ThreadRef("t1", store=database))

    anyio.run(main)
    return database


def test_an_unchanged_network_replays_with_every_step_matched(tmp_path: Path) -> None:
    database = record(tmp_path)
    done = cli("replay", f"{NETWORKS}:network", "t1", "--store", database)
    assert done.returncode == 0, done.stderr
    assert "no divergence: 5 of 5 steps matched" in done.stdout
    assert "tools recorded" in done.stdout  # the command line's default: no side effect runs


def test_a_changed_prompt_exits_1_with_the_diff(tmp_path: Path) -> None:
    database = record(tmp_path)
    done = cli("replay", f"{NETWORKS}:careful", "t1", "--store", f"sqlite:{database}")
    assert done.returncode == 1
    assert "first divergence: turn 0 step 1 (coder)" in done.stdout
    assert "+You write careful Python code. Follow the plan:" in done.stdout
    as_json = cli("replay", f"{NETWORKS}:careful", "t1", "--store", database, "--json")
    report = json.loads(as_json.stdout)
    assert report["diverged"] is True and report["firstDivergence"] == {"turn": 0, "index": 1}
    assert report["steps"][1]["differences"][0]["aspect"] == "instructions"


def test_an_unknown_thread_or_a_bad_id_is_one_line(tmp_path: Path) -> None:
    database = record(tmp_path)
    for thread, said in (
        ("nope", "thread 'nope'"),
        ("x" * 300, "over the limit of 256"),
        ("", "thread_id must not be empty"),  # was InvalidIdError's traceback
    ):
        done = cli("replay", f"{NETWORKS}:network", thread, "--store", database)
        assert done.returncode == 2, done.stdout
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("error: ") and said in line and "Traceback" not in done.stderr


def test_a_store_that_cannot_be_read_is_one_line_and_no_file_is_made(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    for store, said in (
        (str(missing), f"error: --store: no such thread store file: {missing}"),
        (f"sqlite:///{tmp_path}/no/dir/threads.db", "error: --store: no such thread store file"),
        (
            "postgresql://app:s3cret-pw@127.0.0.1:1/threads",  # nothing listens on port 1
            "error: --store: cannot open the thread store: ConnectionRefusedError",
        ),
    ):
        done = cli("replay", f"{NETWORKS}:network", "t1", "--store", store)
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(said) and "s3cret" not in line, done.stderr
    assert not missing.exists()  # a replay only reads: a mistyped path made an empty store
