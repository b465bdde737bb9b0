"""The dev UI in a real browser with its runs on the thread store (`dev --store`): a run from
the page survives a page reload, a stored thread is forked and continued from the page, and a
user's `user:` keys reach their next thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.browser import stored_threads
from tests.network.devui.networks import codegen_network


def stored(db: Path) -> dict[str, Any]:
    """Every stored thread: (user_id, its keys, how many agent calls, how many messages)."""
    return {
        thread_id: (t.user_id, dict(t.state), len(t.results), len(t.messages))
        for thread_id, t in stored_threads(db).items()
    }


def send(page: Any, text: str) -> None:
    page.fill("#chat-input", text)
    page.click("#chat-send")


def test_a_run_from_the_page_lives_on_the_store_and_continues_after_a_fork(
    page: Any, tmp_path: Path
) -> None:
    db = tmp_path / "threads.db"
    with serve(app(codegen_network(), store=db, run_on_store=True)) as url:
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='coder']")
        page.click("#run-options summary")
        page.fill("#user-id", "alice")
        page.fill("#initial-state", '{"user:language": "fr"}')
        send(page, "Write an add function")
        page.wait_for_selector("#status:text('finished')")
        thread_id = page.inner_text("#source").removeprefix("live thread ").strip()
        user, state, calls, _ = stored(db)[thread_id]
        assert (user, calls, state["plan"]) == ("alice", 5, "1. calc/add.py\n2. tests/test_add.py")

        page.reload()  # the run survives the page: it is a stored thread
        page.click(f"#threads .thread[data-thread-id='{thread_id}']")
        page.wait_for_selector("#status:text('replay')")
        assert page.locator("#timeline .row").count() == 5
        page.click("#timeline .row[data-index='1']")
        page.click("#edit-state summary")
        page.fill("#state-edit", '{"plan": "1. calc/mul.py", "files": {"calc/add.py": "x"}}')
        page.click("#fork-edited")
        page.wait_for_selector("#fork-updated")
        (fork,) = [t for t in stored(db) if t.startswith(thread_id + "~fork-")]
        page.wait_for_selector(f"#source:has-text('{fork}')")

        with page.expect_request(lambda r: r.url.endswith("/agui/")) as request:
            send(page, "Go on")  # continues the fork, as the user it belongs to
        assert request.value.post_data_json["threadId"] == fork
        assert request.value.headers.get("x-agent-network-user") == "alice"
        page.wait_for_selector("#status:text('finished')")
        assert "continuing stored thread" in page.inner_text("#source")
        roles = page.locator("#conversation li.message").evaluate_all(
            "items => items.map(i => i.getAttribute('data-role'))"
        )
        assert roles[:4] == ["user", "assistant", "assistant", "tool"]  # the fork's, from the store
        assert "user" in roles[4:]  # and the new message
        user, state, calls, _ = stored(db)[fork]
        assert user == "alice" and calls > 2  # the run went on from the fork's two calls
        assert state["plan"] == "1. calc/mul.py"
        assert stored(db)[thread_id][2] == 5  # the source is unchanged

        page.click("#new-thread")  # alice's next thread shares her user: keys
        page.click("#run-options summary")  # closed since the page reload
        page.fill("#user-id", "alice")
        page.fill("#initial-state", "")
        send(page, "Write a mul function")
        page.wait_for_selector("#status:text('finished')")
        page.click("#timeline .row[data-index='0']")
        entry = page.locator("#detail-state .state-key[data-key='user:language']")
        entry.locator("summary .summary-note").click()
        assert entry.locator("pre").inner_text() == "fr"
