"""A process killed with `kill -9` mid-run leaves a consistent SQLite thread behind."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from network.threads import SQLStore

pytestmark = pytest.mark.anyio

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import anyio

    from agents import Agent, ScriptedModel, ToolContext, call, tool
    from network import Network, ThreadRef

    db, marker, block_at, calls = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


    @tool
    async def step(n: int, ctx: ToolContext) -> str:
        '''Do step n.'''
        ctx.kv.set("steps", [n])
        ctx.kv.set("user:steps", [n])
        if n == block_at:
            marker.write_text("blocked")
            while not marker.with_suffix(".release").exists():  # never released
                await anyio.sleep(0.05)
        return f"step {n} done"


    script = [call("step", n=n) for n in range(1, calls + 1)]
    agent = Agent("worker", tools=[step], model=ScriptedModel(script))
    schema = {"steps": {"type": list[int]}, "user:steps": {"type": list[int]}}
    network = Network(
        "crashy", agents=[agent], router=lambda ctx: agent if ctx.call_count < calls else None,
        state_schema=schema,
    )


    async def main() -> None:
        await network.run("work", thread=ThreadRef("job", user_id="u", store=db))


    anyio.run(main)
    """
)


def start_worker(tmp_path: Path, block_at: int, calls: int) -> tuple[subprocess.Popen[bytes], Path]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    marker = tmp_path / "blocked"
    db = tmp_path / "crash.db"
    process = subprocess.Popen(
        [sys.executable, str(script), str(db), str(marker), str(block_at), str(calls)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return process, db


def kill_9(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=10) == -signal.SIGKILL


def check_consistent(db: Path) -> tuple[int, int, int]:
    """Integrity plus the thread's own invariants; returns (revision, results, messages)."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        revision, result_count, message_count = conn.execute(
            "SELECT revision, result_count, message_count FROM agent_network_threads "
            "WHERE thread_id = 'job'"
        ).fetchone()
        results = conn.execute(
            "SELECT count(*), coalesce(max(seq), -1) FROM agent_network_results"
        ).fetchone()
        messages = conn.execute(
            "SELECT count(*), coalesce(max(seq), -1) FROM agent_network_messages"
        ).fetchone()
    # One commit per agent call; rows numbered without gaps; the header agrees with the rows.
    assert results == (result_count, result_count - 1)
    assert messages == (message_count, message_count - 1)
    assert revision == result_count
    # The user's message, then each call's assistant message and tool result.
    assert message_count == (1 + 2 * result_count if result_count else 0)
    return revision, result_count, message_count


async def test_kill_9_during_the_third_call_keeps_the_two_completed_calls(
    tmp_path: Path,
) -> None:
    process, db = start_worker(tmp_path, block_at=3, calls=5)
    marker = tmp_path / "blocked"
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the worker never reached its third call"
        time.sleep(0.02)
    kill_9(process)

    assert check_consistent(db) == (2, 2, 5)
    async with SQLStore(str(db)) as store:
        thread = await store.get_thread("job")
        assert thread is not None
        assert [r.tool_calls[0].content for r in thread.results] == ["step 1 done", "step 2 done"]
        assert thread.state == {"steps": [1, 2]}
        assert thread.user_state == {"user:steps": [1, 2]}
        assert [m.content for m in thread.messages if m.role == "user"] == ["work"]


async def test_kill_9_at_any_moment_leaves_whole_calls_only(tmp_path: Path) -> None:
    process, db = start_worker(tmp_path, block_at=0, calls=10_000)  # commits as fast as it can
    deadline = time.monotonic() + 30
    while True:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the worker never committed three calls"
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    row = conn.execute(
                        "SELECT revision FROM agent_network_threads WHERE thread_id = 'job'"
                    ).fetchone()
            except sqlite3.OperationalError:  # tables not created yet
                row = None
            if row and row[0] >= 3:
                break
        time.sleep(0.01)
    kill_9(process)  # most likely in the middle of a commit or a call

    revision, result_count, _ = check_consistent(db)
    async with SQLStore(str(db)) as store:
        thread = await store.get_thread("job")
        assert thread is not None
        assert thread.state == {"steps": list(range(1, result_count + 1))}
        assert thread.user_state == {"user:steps": list(range(1, result_count + 1))}
        # The store keeps working: the thread takes another commit on top.
        assert await store.append_user_message("job", "resume", revision=revision) == revision + 1
