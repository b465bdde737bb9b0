"""A value longer than the page shows at once can be opened whole or downloaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ThreadRef
from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.browser import run_async

LONG = "".join(f"line {n:06d}\n" for n in range(15_000))  # 180,000 characters


def long_network() -> Network:
    @tool
    def write_log(ctx: ToolContext) -> str:
        """Keep the build log, and answer with it."""
        ctx.kv.set("log", LONG)
        return "kept\n" + LONG

    keeper = Agent("keeper", tools=[write_log], model=ScriptedModel([call("write_log"), "ok"]))
    return Network("long", agents=[keeper])


def test_a_long_state_value_is_shown_whole_or_downloaded(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    network = long_network()
    run_async(lambda: network.run("go", thread=ThreadRef("t-long", store=db)))
    with serve(app(network, store=db)) as url:
        page.goto(url)
        page.locator("#threads .thread[data-thread-id='t-long']").click()
        page.wait_for_selector("#status:text('replay')")
        entry = page.locator("#detail-state .state-key[data-key='log']")
        entry.locator("summary").click()
        shown = entry.locator("pre")
        assert len(shown.inner_text()) < len(LONG)  # the page shows the first part at first
        with page.expect_download() as download:
            entry.locator("button.download").click()
        saved = Path(download.value.path())
        assert saved.read_text() == LONG
        assert download.value.suggested_filename == "log.txt"
        entry.locator("button.show-whole").click()
        assert shown.text_content() == LONG
        assert entry.locator("button.show-whole").count() == 0


def test_a_tool_result_the_server_cut_is_fetched_whole(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    network = long_network()
    run_async(lambda: network.run("go", thread=ThreadRef("t-long", store=db)))
    with serve(app(network, store=db)) as url:
        page.goto(url)
        page.locator("#threads .thread[data-thread-id='t-long']").click()
        page.wait_for_selector("#status:text('replay')")
        tool = page.locator("#detail-tools .tool[data-tool='write_log']")
        result = tool.locator(".long-value")  # the result (the arguments are short)
        assert result.count() == 1
        assert "more characters]" in result.locator("pre").inner_text()  # cut by the server
        result.locator("button.show-whole").click()
        for _ in range(300):  # fetched from /api/value (no eval: the page's CSP forbids it)
            if len(result.locator("pre").text_content() or "") > len(LONG):
                break
            page.wait_for_timeout(100)
        assert result.locator("pre").text_content() == "kept\n" + LONG
        with page.expect_download() as download:
            result.locator("button.download").click()
        assert Path(download.value.path()).read_text() == "kept\n" + LONG

        # the endpoint: whole text, as a file on request, and hostile parameters refused
        answer = httpx.get(
            url + "/api/value", params={"thread": "t-long", "step": 0, "part": "input"}, timeout=30
        )
        assert answer.status_code == 200
        assert answer.text == "go"
        saved = httpx.get(
            url + "/api/value",
            params={"thread": "t-long", "step": 0, "part": "prompt", "download": 1},
            timeout=30,
        )
        assert saved.headers["content-disposition"] == 'attachment; filename="step-0-prompt.txt"'
        for params, key in [
            ({"thread": "t-long", "step": "-1", "part": "input"}, "step"),
            ({"thread": "t-long", "step": "0", "part": "secrets"}, "part"),
            ({"thread": "t-long", "step": "0", "part": "result"}, "call"),
        ]:
            refused = httpx.get(url + "/api/value", params=params, timeout=30)
            assert refused.status_code == 422
            assert refused.json()["error"]["key"] == key
        missing = httpx.get(
            url + "/api/value", params={"thread": "t-long", "step": 9, "part": "input"}, timeout=30
        )
        assert missing.status_code == 404
        other = httpx.get(
            url + "/api/value", params={"thread": "nope", "step": 0, "part": "input"}, timeout=30
        )
        assert other.json()["error"]["code"] == "thread_not_found"
