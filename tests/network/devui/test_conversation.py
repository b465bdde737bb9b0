"""The dev UI in a real browser: the conversation beside the timeline, and how a run ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from network import ThreadRef
from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.browser import run_async
from tests.network.devui.networks import codegen_network


def messages(page: Any) -> list[tuple[str, str]]:
    """(role, text) of each message the conversation view shows."""
    items = page.locator("#conversation li.message")
    return [(item.get_attribute("data-role") or "", item.inner_text()) for item in items.all()]


def test_a_live_run_shows_its_conversation_and_why_it_stopped(page: Any, tmp_path: Path) -> None:
    network = codegen_network(summary="Two files written and approved.")
    with serve(app(network, store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='coder']")
        page.fill("#chat-input", "Write an add function")
        page.click("#chat-send")
        page.wait_for_selector("#status:text('finished')")
        shown = messages(page)
        assert shown[0] == ("user", "user\nWrite an add function")
        roles = [role for role, _ in shown]
        # planner's text; then coder, reviewer, coder, reviewer: a tool call and its result each
        assert roles == ["user", "assistant"] + ["assistant", "tool"] * 4
        assert "1. calc/add.py" in shown[1][1] and "planner" in shown[1][1]
        assert "write_files(" in shown[2][1] and "calc/add.py" in shown[2][1]
        assert '"written"' in shown[3][1]
        assert "Please add a test." in shown[5][1]
        assert page.inner_text("#outcome .stop-reason") == "Stopped: approved"
        summary = page.inner_text("#outcome .run-summary")
        assert summary == "Summary: Two files written and approved."


def test_a_stored_thread_shows_its_conversation_and_last_run(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    network = codegen_network()
    run_async(lambda: network.run("Write an add function", thread=ThreadRef("t-talk", store=db)))
    with serve(app(network, store=db)) as url:
        page.goto(url)
        page.click("#threads .thread[data-thread-id='t-talk']")
        page.wait_for_selector("#status:text('replay')")
        shown = messages(page)
        assert [role for role, _ in shown] == ["user", "assistant"] + ["assistant", "tool"] * 4
        assert shown[0][1] == "user\nWrite an add function"
        assert "review(" in shown[-2][1] and "Looks good." in shown[-2][1]
        note = page.inner_text("#outcome")
        assert "last run (run 1): 5 agent calls" in note
        assert "Output: 1. calc/add.py" in page.inner_text("#output")


def test_a_run_starts_from_the_initial_state_set_on_the_page(page: Any, tmp_path: Path) -> None:
    with serve(app(codegen_network(), store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='coder']")
        page.click("#run-options summary")
        page.fill("#initial-state", '{"topic": 5}')  # the schema says str
        page.fill("#chat-input", "Write an add function")
        page.click("#chat-send")
        error = page.locator("#errors .error")
        error.wait_for()
        assert "run refused: HTTP 422" in error.inner_text()
        assert "topic" in error.inner_text()
        assert page.locator("#timeline .row").count() == 0  # nothing ran
        assert page.input_value("#chat-input") == "Write an add function"  # kept to resend

        page.fill("#initial-state", '{"topic": "addition", "user:language": "fr"}')
        page.click("#chat-send")
        page.wait_for_selector("#status:text('finished')")
        page.click("#timeline .row[data-index='0']")
        for key, value in (("topic", "addition"), ("user:language", "fr")):
            entry = page.locator(f"#detail-state .state-key[data-key='{key}']")
            entry.locator("summary .summary-note").click()  # opens the value
            assert entry.locator("pre").inner_text() == value
        assert [role for role, _ in messages(page)][:2] == ["user", "assistant"]  # sent once
