"""`commit_once`: a durable run's commit that is executed again after the store committed it
(the process died before DBOS recorded the step) is recognised, not committed twice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from network.errors import StaleThreadError
from network.history.messages import AssistantMessage
from network.history.results import InferenceResult
from network.threads import SQLStore
from network.threads.commit_once import commit_once
from network.threads.thread_data import Commit, ResultRecord

pytestmark = pytest.mark.anyio


def a_commit(revision: int, agent: str, value: str, run_id: str = "run-1") -> Commit:
    said = AssistantMessage(f"{agent} says hi")
    result = InferenceResult(agent, "go", output=[said], started_at=time.time())
    return Commit(
        revision=revision,
        run_id=run_id,
        messages=[AssistantMessage(f"{agent} says hi")],
        results=[ResultRecord(result, None)],
        state={"k": f'"{value}"'},
    )


async def test_a_commit_executed_again_is_taken_as_done(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    try:
        await store.create_thread("t1", app_name="app", user_id="u")
        commit = a_commit(0, "planner", "one")
        revision = await store.append_results("t1", commit)  # committed, then the crash
        assert await commit_once(store, "t1", commit) == revision  # the step runs again
        thread = await store.get_thread("t1")
        assert thread is not None
        assert [r.agent for r in thread.results] == ["planner"]
        assert thread.revision == revision
    finally:
        await store.close()


async def test_another_runs_commit_still_makes_it_stale(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    try:
        await store.create_thread("t1", app_name="app", user_id="u")
        await store.append_results("t1", a_commit(0, "someone-else", "theirs"))
        with pytest.raises(StaleThreadError):
            await commit_once(store, "t1", a_commit(0, "planner", "mine"))
    finally:
        await store.close()


async def test_the_same_call_replayed_later_by_a_resumed_run_is_taken_as_done(
    tmp_path: Path,
) -> None:
    """A resumed run rebuilds the call from its recorded answer, at another time: its
    `started_at` differs from the stored call's, and it is still this very commit."""
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    try:
        await store.create_thread("t1", app_name="app", user_id="u")
        revision = await store.append_results("t1", a_commit(0, "planner", "one"))
        replayed = a_commit(0, "planner", "one")  # built again, a moment later
        assert replayed.results[0].result.started_at != 0
        assert await commit_once(store, "t1", replayed) == revision
        thread = await store.get_thread("t1")
        assert thread is not None and [r.agent for r in thread.results] == ["planner"]
    finally:
        await store.close()


async def test_the_same_looking_call_of_another_run_still_makes_it_stale(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}")
    try:
        await store.create_thread("t1", app_name="app", user_id="u")
        await store.append_results("t1", a_commit(0, "planner", "one", run_id="run-2"))
        with pytest.raises(StaleThreadError):
            await commit_once(store, "t1", a_commit(0, "planner", "one"))
    finally:
        await store.close()
