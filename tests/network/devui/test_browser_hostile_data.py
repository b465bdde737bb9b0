"""What a stranger's data does to the dev UI page: keys named `__proto__`, direction controls in
ids and values, a stored thread the server cannot decode; and a page load without a console
error (the favicon)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ThreadRef, merge_dicts
from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.browser import run_async

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: reverses every character after it, unless isolated


def prototype_network() -> Network:
    """One agent whose tool writes a top-level `__proto__` key and merges one into a dict."""

    @tool
    def put(ctx: ToolContext) -> str:
        """Write the keys."""
        ctx.kv.set("__proto__", {"polluted": True})
        ctx.kv.set("settings", {"__proto__": {"nested": 1}})  # merged into the existing dict
        ctx.kv.set("label", RLO + "evil")
        return "done"

    writer = Agent(
        "writer",
        system="Write.",
        tools=[put],
        model=ScriptedModel([call("put"), "written"]),
    )
    schema = {"settings": {"type": dict, "handler": merge_dicts}}
    return Network("hostile", agents=[writer], state_schema=schema)


def open_stored(page: Any, url: str, thread_id: str) -> None:
    page.goto(url)
    page.locator(f"#threads .thread[data-thread-id='{thread_id}']").click()
    page.wait_for_selector("#status:text('replay')")


def test_keys_named_proto_are_shown_at_the_top_level_and_nested(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    network = prototype_network()
    seed = {"settings": {"a": 1}}
    run_async(lambda: network.run("go", thread=ThreadRef("t-proto", store=db), state=seed))
    with serve(app(network, store=db)) as url:
        open_stored(page, url, "t-proto")
        state = page.locator("#detail-state")
        top = state.locator(".state-key[data-key='__proto__']")
        assert top.count() == 1  # the key is there, not swallowed as the object's prototype
        settings = state.locator(".state-key[data-key='settings']")
        settings.locator("summary").first.click()
        settings.locator(".tree").wait_for()  # filled by the toggle event, after the click
        assert "__proto__" in settings.inner_text()  # nested, added by the merge
        assert "object, 2 keys" in settings.inner_text()
        diff = page.inner_text("#detail-diff")
        assert "__proto__" in diff


def test_direction_controls_in_ids_and_values_stay_inside_them(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    network = prototype_network()
    thread_id = "t" + RLO + "x"
    run_async(
        lambda: network.run("go", thread=ThreadRef(thread_id, store=db), state={"settings": {}})
    )
    with serve(app(network, store=db)) as url:
        page.goto(url)
        page.locator("#threads .thread").first.click()
        page.wait_for_selector("#status:text('replay')")
        # the id is isolated from the words around it, in the header and in the thread list
        isolated = page.locator("#source bdi")
        assert isolated.count() == 1
        assert isolated.inner_text() == thread_id
        assert page.locator("#threads .thread bdi").first.inner_text() == thread_id
        style = page.evaluate("getComputedStyle(document.querySelector('#source bdi')).unicodeBidi")
        assert style == "isolate"
        # inside JSON previews the control is shown as an escape, not applied
        diff = page.inner_text("#detail-diff")
        assert RLO not in diff
        assert "\\u202e" in diff


def test_a_stored_thread_that_cannot_be_decoded_is_a_json_error_shown_on_the_page(
    page: Any, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    network = prototype_network()
    # Written by another process: this one would serve its own decoded copy of the records.
    write = (
        "import anyio\n"
        "from tests.network.devui.test_browser_hostile_data import prototype_network\n"
        "anyio.run(lambda: prototype_network().run("
        f"'go', thread_id='t-broken', store={str(db)!r}, state={{'settings': {{}}}}))\n"
    )
    root = Path(__file__).resolve().parents[3]
    environment = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-c", write], check=True, cwd=root, env=environment)
    with sqlite3.connect(db) as connection:  # a record written by a version that differs
        connection.execute('UPDATE agent_network_results SET data = \'{"agent": 1, "x"\'')
    with serve(app(network, store=db)) as url:
        answer = httpx.get(url + "/api/thread", params={"id": "t-broken"}, timeout=30)
        assert answer.status_code == 500
        error = answer.json()["error"]
        assert error["code"] == "store_failed"
        assert "reference err_" in error["message"]
        assert "agent" not in error["message"]  # no decoding detail reaches the client
        history = httpx.get(
            url + "/api/history", params={"thread": "t-broken", "key": "label"}, timeout=30
        )
        assert history.status_code == 500
        assert history.json()["error"]["code"] == "store_failed"

        open_stored_failing(page, url)
        assert page.inner_text("#status") == "failed"
        assert "the thread store failed" in page.inner_text("#errors")


def open_stored_failing(page: Any, url: str) -> None:
    page.goto(url)
    page.locator("#threads .thread[data-thread-id='t-broken']").click()
    page.wait_for_selector("#status:text('failed')")


def test_a_page_load_logs_no_console_error(page: Any, tmp_path: Path) -> None:
    messages: list[str] = []

    def keep_errors(message: Any) -> None:
        if message.type == "error":
            messages.append(message.text)

    page.on("console", keep_errors)
    with serve(app(prototype_network(), store=tmp_path / "t.db")) as url:
        icon = httpx.get(url + "/favicon.ico", timeout=30)
        assert icon.status_code == 200
        assert icon.headers["content-type"].startswith("image/svg+xml")
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='writer']")
        page.wait_for_load_state("networkidle")
    assert messages == []
