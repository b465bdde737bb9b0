"""The dev UI in a real browser: an approval answered with edited arguments
(AG-UI 1.0's approve_with_edits)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.networks import codegen_network

MUL = {"files": {"calc/mul.py": "def mul(a, b):\n    return a * b\n"}}


def test_an_approval_is_accepted_with_edited_arguments(page: Any, tmp_path: Path) -> None:
    with serve(app(codegen_network(confirm=True), store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='coder']")
        page.fill("#chat-input", "Write an add function")
        page.click("#chat-send")
        interrupt = page.locator("#interrupts .interrupt")
        interrupt.wait_for()
        interrupt.locator(".edit-call summary").click()
        editor = interrupt.locator("textarea.edit-arguments")
        assert json.loads(editor.input_value()) == {  # the model's arguments, to edit
            "files": {"calc/add.py": "def add(a, b):\n    return a + b\n"}
        }

        editor.fill(json.dumps({"files": 5}))  # the tool's schema says dict[str, str]
        interrupt.locator("button.accept-edited").click()
        page.wait_for_selector("#errors .error")
        refused = page.inner_text("#errors")
        assert "answer refused: HTTP 422" in refused and "files" in refused
        assert page.inner_text("#status") == "waiting for confirmation"  # still pending

        interrupt = page.locator("#interrupts .interrupt")
        interrupt.locator(".edit-call summary").click()
        interrupt.locator("textarea.edit-arguments").fill(json.dumps(MUL))
        interrupt.locator("button.accept-edited").click()
        # the reviewer asks for a test: the coder's second write, accepted as it is
        page.wait_for_selector("#status:text('waiting for confirmation'), #status:text('finished')")
        if page.inner_text("#status") == "waiting for confirmation":
            page.locator("#interrupts .interrupt button.accept").click()
        page.wait_for_selector("#status:text('finished')")
        page.locator("#timeline .row", has_text="coder").first.click()
        tools = page.inner_text("#detail-tools")
        assert "calc/mul.py" in tools  # the edited call is what ran
        page.locator("#timeline .row").last.click()
        files = page.locator("#detail-state .state-key[data-key='files']")
        files.locator("summary").click()
        files.locator(".tree").wait_for()
        assert "calc/mul.py" in files.inner_text()
        assert "calc/add.py" not in files.inner_text()
