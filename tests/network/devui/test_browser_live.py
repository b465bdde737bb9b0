"""The dev UI in a real browser: a run from the chat box, watched live over AG-UI."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.networks import codegen_network

STEPS = ["planner", "coder", "reviewer", "coder", "reviewer"]


def row_agents(page: Any) -> list[str]:
    titles = page.locator("#timeline .row .title").all_inner_texts()
    return [title.split(" ")[1] for title in titles]  # "#3 coder" (" ▸ run 2" on a run's first)


def start(page: Any, url: str, text: str = "Write an add function") -> None:
    page.goto(url)
    page.wait_for_selector("#graph .node[data-agent='coder']")
    page.fill("#chat-input", text)
    page.click("#chat-send")


def test_a_run_from_the_chat_box_shows_its_steps_in_order(page: Any, tmp_path: Path) -> None:
    gate = threading.Event()
    with serve(app(codegen_network(gate=gate), store=tmp_path / "t.db")) as url:
        start(page, url)
        # the coder's tool waits on the gate: its step is running, highlighted in the graph
        page.wait_for_selector("#graph .node.running[data-agent='coder']")
        page.wait_for_selector("#timeline .row.running[data-index='1']")
        assert page.inner_text("#status") == "running"
        page.click("#timeline .row[data-index='1']")  # the step under way, opened while it runs
        tool = page.locator("#detail-tools .tool[data-tool='write_files']")
        assert "calc/add.py" in tool.inner_text()  # the arguments as streamed
        assert "result: (waiting)" in tool.inner_text()
        gate.set()
        page.wait_for_selector("#status:text('finished')")
        assert '"written"' in tool.inner_text()  # the open step follows its call to the end
        assert row_agents(page) == STEPS
        assert page.locator("#graph .node.running").count() == 0
        assert "Looks good." not in page.inner_text("#errors")

        page.click("#timeline .row[data-index='0']")
        assert page.inner_text("#detail-title") == "Step #0: planner"
        assert "1. calc/add.py" in page.inner_text("#detail-answer")  # the streamed tokens
        page.click("#detail-prompt summary")
        assert "Plan the task." in page.inner_text("#detail-prompt")
        assert "tokens" in page.inner_text("#detail-usage")
        assert "duration" in page.inner_text("#detail-usage")
        assert page.locator("#graph .node.selected[data-agent='planner']").count() == 1


def test_the_files_key_shows_its_diff_and_its_history(page: Any, tmp_path: Path) -> None:
    with serve(app(codegen_network(), store=tmp_path / "t.db")) as url:
        start(page, url)
        page.wait_for_selector("#status:text('finished')")
        page.click("#timeline .row[data-index='1']")  # the coder's first call
        tool = page.locator("#detail-tools .tool[data-tool='write_files']")
        assert "calc/add.py" in tool.inner_text()  # arguments
        assert "written" in tool.inner_text()  # result
        added = page.locator("#detail-diff .diff-row.op-add[data-key='files']")
        assert added.count() == 1
        assert "calc/add.py" in added.inner_text()
        files = page.locator("#detail-state .state-key[data-key='files']")
        assert "touched-add" in (files.get_attribute("class") or "")
        assert files.get_attribute("open") is None  # state is shown collapsed
        untouched = page.locator("#detail-state .state-key[data-key='plan']")
        assert "touched" not in (untouched.get_attribute("class") or "")

        page.click("#timeline .row[data-index='3']")  # the second call merges a new file in
        diff = page.locator("#detail-diff .diff-row[data-key='files']")
        assert "tests/test_add.py" in diff.inner_text()
        assert "calc/add.py" not in diff.inner_text()  # only what this step changed
        files = page.locator("#detail-state .state-key[data-key='files']")
        assert "touched-replace" in (files.get_attribute("class") or "")
        files.locator("summary").click()
        files.locator(".tree").wait_for()  # children are rendered when the key is opened
        assert "calc/add.py" in files.inner_text() and "tests/test_add.py" in files.inner_text()

        files.locator(".key-name").click()  # history_of("files")
        page.wait_for_selector("#history li.write")
        writes = page.locator("#history li.write").all_inner_texts()
        assert len(writes) == 2
        assert writes[0].startswith("step #1 · coder via tool write_files · set")
        assert writes[1].startswith("step #3 · coder via tool write_files · set")

        # A second message on the thread sends the conversation back as an AG-UI client
        # does (assistant messages, tool calls, their results): the server accepts it.
        page.fill("#chat-input", "Anything else?")
        page.click("#chat-send")
        page.wait_for_selector("#status:text('finished')")
        assert page.locator("#errors .error").count() == 0


def test_a_confirmation_is_accepted_and_the_run_resumes(page: Any, tmp_path: Path) -> None:
    with serve(app(codegen_network(confirm=True), store=tmp_path / "t.db")) as url:
        start(page, url)
        for _ in range(2):  # the coder writes twice, each write confirmed
            accept = page.locator("#interrupts .interrupt button.accept")
            accept.wait_for()
            assert page.inner_text("#status") == "waiting for confirmation"
            assert "coder wants to run write_files" in page.inner_text("#interrupts")
            accept.click()
            page.wait_for_selector(
                "#status:text('waiting for confirmation'), #status:text('finished')"
            )
        page.wait_for_selector("#status:text('finished')")
        assert page.locator("#errors .error").count() == 0
        agents = row_agents(page)
        assert agents[0] == "planner" and agents[-1] == "reviewer"
        assert agents.count("reviewer") == 2  # the accepted files were reviewed
        last = page.locator("#timeline .row").last
        last.click()
        files = page.locator("#detail-state .state-key[data-key='files']")
        files.locator("summary").click()
        files.locator(".tree").wait_for()
        assert "tests/test_add.py" in files.inner_text()


def test_a_rejected_confirmation_reaches_the_model(page: Any, tmp_path: Path) -> None:
    with serve(app(codegen_network(confirm=True), store=tmp_path / "t.db")) as url:
        start(page, url)
        page.locator("#interrupts .interrupt button.reject").click()
        # Nothing was written, so the reviewer's instructions ({files}) cannot be rendered:
        # the run fails, and the page says why (a library error, shown as it is).
        page.wait_for_selector("#status:text('failed')")
        assert "state has no key 'files'" in page.inner_text("#errors")
        page.locator("#timeline .row", has_text="coder").last.click()
        assert "Rejected" in page.inner_text("#detail-tools")


def test_a_run_error_is_shown(page: Any, tmp_path: Path) -> None:
    from agents import Agent, ScriptedModel
    from network import Network

    def broken(request: Any) -> Any:
        raise RuntimeError("secret connection string postgres://u:pw@db")

    network = Network("broken", agents=[Agent("solo", model=ScriptedModel(broken))])
    with serve(app(network, store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.fill("#chat-input", "hello")
        page.click("#chat-send")
        page.wait_for_selector("#status:text('failed')")
        error = page.inner_text("#errors")
        assert "run failed" in error
        assert "pw@db" not in error  # the AG-UI server's screen: no exception text leaked
        assert "error" in (page.locator("#timeline .row").first.get_attribute("class") or "")
