"""The dev UI in a real browser: stored threads listed and replayed, and a large one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from network import ThreadRef
from network.devui import app
from network.threads import MemoryStore
from tests.network.agui.live import serve
from tests.network.devui.browser import run_async
from tests.network.devui.networks import codegen_network, long_network

STEPS = 1_000
BLOB_AT = 500
MAX_NODES = 3_000  # the page's DOM stays this small whatever the run's size


def node_count(page: Any) -> int:
    return int(page.evaluate("document.getElementsByTagName('*').length"))


def test_a_stored_thread_replays_step_by_step(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    network = codegen_network()
    run_async(lambda: network.run("Write an add function", thread=ThreadRef("t-replay", store=db)))
    sent_back = {"review": {"approved": False, "comments": "Please add a test."}}
    run_async(
        lambda: network.run("Once more", thread=ThreadRef("t-replay", store=db), state=sent_back)
    )
    with serve(app(network, store=db)) as url:
        page.goto(url)
        thread = page.locator("#threads .thread[data-thread-id='t-replay']")
        assert "7 steps" in thread.inner_text()
        thread.click()
        page.wait_for_selector("#status:text('replay')")
        assert "stored thread t-replay" in page.inner_text("#source")
        titles = page.locator("#timeline .row .title").all_inner_texts()
        assert [t.split(" ", 1)[1] for t in titles] == [
            "planner ▸ run 1",
            "coder",
            "reviewer",
            "coder",
            "reviewer",
            "coder ▸ run 2",
            "reviewer",
        ]
        assert page.inner_text("#detail-title") == "Step #0: planner"  # opened on the first
        assert page.locator("#graph .node.selected[data-agent='planner']").count() == 1
        page.click("#step-next")
        assert page.inner_text("#detail-title") == "Step #1: coder"
        assert page.locator("#graph .node.selected[data-agent='coder']").count() == 1
        added = page.locator("#detail-diff .diff-row.op-add[data-key='files']")
        assert "calc/add.py" in added.inner_text()
        assert "write_files" in page.inner_text("#detail-tools")
        page.click("#timeline .row[data-index='3']")
        files = page.locator("#detail-state .state-key[data-key='files']")
        assert "touched-replace" in (files.get_attribute("class") or "")
        files.locator(".key-name").click()  # history_of, answered by the server
        page.wait_for_selector("#history li.write")
        writes = page.locator("#history li.write").all_inner_texts()
        assert [w.split(" · ")[:2] for w in writes] == [
            ["step #1", "coder"],
            ["step #3", "coder"],
            ["step #5", "coder"],
        ]
        page.click("#step-prev")  # going back recomputes from the start
        assert page.inner_text("#detail-title") == "Step #2: reviewer"
        review = page.locator("#detail-state .state-key[data-key='review']")
        assert "touched-add" in (review.get_attribute("class") or "")


@pytest.fixture(scope="module")
def large_store() -> Iterator[MemoryStore]:
    store = MemoryStore()
    network = long_network(STEPS, BLOB_AT)
    result = run_async(lambda: network.run("go", thread=ThreadRef("t-large", store=store)))
    assert len(result.state.results) == STEPS
    assert len(json.dumps(result.state.kv.get("blob"))) > 5_000_000
    yield store


def test_a_large_replay_stays_responsive(page: Any, large_store: MemoryStore) -> None:
    with serve(app(long_network(STEPS, BLOB_AT), store=large_store)) as url:
        page.goto(url)
        page.click("#threads .thread[data-thread-id='t-large']")
        page.wait_for_selector("#status:text('replay')")
        assert page.inner_text("#step-count") == f"({STEPS} steps)"
        # virtualised: only the rows in view (plus a few) exist
        assert page.locator("#timeline .row").count() < 40
        assert node_count(page) < MAX_NODES

        page.evaluate("document.getElementById('timeline').scrollTop = 1e9")
        last = page.locator(f"#timeline .row[data-index='{STEPS - 1}']")
        last.click()
        assert page.inner_text("#detail-title") == f"Step #{STEPS - 1}: worker"
        assert page.locator("#timeline .row[data-index='0']").count() == 0
        assert page.locator("#timeline .row").count() < 40
        # the 5 MB value: shown collapsed, its size said, nothing of it rendered yet
        blob = page.locator("#detail-state .state-key[data-key='blob']")
        assert "object, 20000 keys" in blob.inner_text()
        assert blob.get_attribute("open") is None
        assert node_count(page) < MAX_NODES

        page.evaluate(f"document.getElementById('timeline').scrollTop = {BLOB_AT * 28 - 100}")
        page.click(f"#timeline .row[data-index='{BLOB_AT}']")  # the step that wrote it
        assert page.inner_text("#detail-title") == f"Step #{BLOB_AT}: worker"
        added = page.locator("#detail-diff .diff-row.op-add[data-key='blob']")
        assert added.count() == 1
        assert len(added.inner_text()) < 1_000  # a bounded preview, not 5 MB of text
        blob = page.locator("#detail-state .state-key[data-key='blob']")
        blob.locator("summary").click()
        blob.locator(".tree").wait_for()
        assert blob.locator(".tree > .state-key").count() == 100  # one page of children
        more = blob.locator(".tree > button.more")
        assert more.inner_text() == "show 100 more of 19900"
        more.click()
        assert blob.locator(".tree > .state-key").count() == 200
        assert node_count(page) < MAX_NODES

        page.click("#step-next")  # still answering clicks
        assert page.inner_text("#detail-title") == f"Step #{BLOB_AT + 1}: worker"
        page.keyboard.press("ArrowDown")
        assert page.inner_text("#detail-title") == f"Step #{BLOB_AT + 2}: worker"
        assert node_count(page) < MAX_NODES
