"""The dev UI in a real browser: a stored thread forked, edited and rewound from a step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from network import ThreadRef
from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.browser import run_async, stored_threads
from tests.network.devui.networks import codegen_network


def stored(db: Path) -> dict[str, Any]:
    """Every stored thread: its keys and how many agent calls it holds."""
    return {
        thread_id: (dict(t.state), len(t.results)) for thread_id, t in stored_threads(db).items()
    }


def open_step(page: Any, url: str, thread_id: str, index: int) -> None:
    page.goto(url)
    page.click(f"#threads .thread[data-thread-id='{thread_id}']")
    page.wait_for_selector("#status:text('replay')")
    page.click(f"#timeline .row[data-index='{index}']")
    assert page.inner_text("#detail-title").startswith(f"Step #{index}:")


def test_a_stored_thread_is_forked_from_a_step(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    network = codegen_network()
    run_async(lambda: network.run("Write an add function", thread=ThreadRef("t-1", store=db)))
    with serve(app(network, store=db)) as url:
        open_step(page, url, "t-1", 1)
        page.click("#fork-here")
        page.wait_for_selector("#travel-report .travel-head")
        forks = [t for t in stored(db) if t.startswith("t-1~fork-")]
        assert len(forks) == 1
        assert page.inner_text("#travel-report") == f"Forked t-1 at step #1 as {forks[0]}"
        # the fork is opened: its two steps, and it is in the thread list
        page.wait_for_selector(f"#source:has-text('{forks[0]}')")
        assert page.locator("#timeline .row").count() == 2
        page.wait_for_selector(f"#threads .thread[data-thread-id='{forks[0]}']")
    assert stored(db)["t-1"][1] == 5  # the source is unchanged


def test_the_state_is_edited_at_a_step_before_forking(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    network = codegen_network()
    run_async(lambda: network.run("Write an add function", thread=ThreadRef("t-1", store=db)))
    with serve(app(network, store=db)) as url:
        open_step(page, url, "t-1", 0)
        page.click("#edit-state summary")
        shown = json.loads(page.input_value("#state-edit"))
        assert shown == {"plan": "1. calc/add.py\n2. tests/test_add.py"}  # the state at step #0

        before = stored(db)
        page.fill("#state-edit", json.dumps({**shown, "files": {"a.py": 3}}))
        page.click("#fork-edited")
        error = page.locator("#errors .error")
        error.wait_for()
        assert "fork refused" in error.inner_text()
        assert "[files]" in error.inner_text()  # the key at fault
        assert stored(db) == before  # nothing was created

        page.fill("#state-edit", json.dumps({"plan": "1. calc/mul.py", "topic": "mul"}))
        page.click("#fork-edited")
        page.wait_for_selector("#fork-updated")
        assert page.inner_text("#fork-updated") == "with the state edited: plan, topic"
    after = stored(db)
    (fork,) = [t for t in after if t.startswith("t-1~fork-")]
    state, calls = after[fork]
    assert calls == 1
    assert state == {"plan": "1. calc/mul.py", "topic": "mul"}  # only the changed keys sent


def test_a_stored_thread_is_rewound_and_the_tool_calls_not_undone_shown(
    page: Any, tmp_path: Path
) -> None:
    db = tmp_path / "threads.db"
    network = codegen_network()
    run_async(lambda: network.run("Write an add function", thread=ThreadRef("t-1", store=db)))
    with serve(app(network, store=db)) as url:
        open_step(page, url, "t-1", 1)
        page.click("#rewind-here")
        page.wait_for_selector("#not-undone li")
        head = page.inner_text("#travel-report .travel-head")
        assert head.startswith("Rewound t-1 to step #1: 3 calls discarded, kept whole as t-1~")
        rows = page.locator("#not-undone li").all_inner_texts()
        assert [row.split(" · ")[:3] for row in rows] == [
            ["step #2", "reviewer", "review"],
            ["step #3", "coder", "write_files"],
            ["step #4", "reviewer", "review"],
        ]
        assert "were not undone" in page.inner_text("#travel-report .warning")
        page.wait_for_selector("#status:text('replay')")
        page.wait_for_selector("#timeline .row[data-index='2']", state="detached")
        assert page.locator("#timeline .row").count() == 2
    threads = stored(db)
    assert threads["t-1"][1] == 2
    (kept,) = [t for t in threads if t.startswith("t-1~rewound-")]
    assert threads[kept][1] == 5


def test_a_stored_thread_is_replayed_with_todays_network(page: Any, tmp_path: Path) -> None:
    from tests.network.capabilities.replay.teams import CODER, TASK, codegen

    db = tmp_path / "threads.db"
    run_async(lambda: codegen().run(TASK, thread=ThreadRef("t-1", store=db)))
    changed = codegen(coder_prompt=CODER.replace("Python code", "careful Python code"))
    with serve(app(changed, store=db)) as url:
        open_step(page, url, "t-1", 0)
        page.click("#replay-thread")
        page.wait_for_selector("#replay-report")
        head = page.inner_text("#travel-report .travel-head")
        assert head == "Replayed t-1 with today's network: diverged from its recording"
        shown = page.inner_text("#replay-report")
        assert "first divergence: turn 0 step 1 (coder)" in shown
        assert "+You write careful Python code. Follow the plan:" in shown
    assert stored(db)["t-1"][1] == 5  # the recorded thread is only read
