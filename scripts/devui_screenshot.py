"""Take docs/devui.png: the dev UI on the offline codegen example, after a run from its chat box.

    python scripts/devui_screenshot.py            # needs Debian's chromium and playwright

It serves `examples/codegen.py:network` with a stored thread in a temporary SQLite file, runs
the network from the chat box, opens the coder's second step with its `files` diff, expands the
state's `files` key and asks for its history: the picture the README and docs/devui.md show.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

from network import ThreadRef  # noqa: E402
from network.devui import app  # noqa: E402


def load_example() -> object:
    spec = importlib.util.spec_from_file_location("codegen_example", ROOT / "examples/codegen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.network


def main() -> None:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (only this script needs it)

    network = load_example()
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "threads.db"
        anyio.run(
            lambda: network.run(
                "Write add(a, b) with a test.", thread=ThreadRef("earlier-run", store=store)
            )
        )  # type: ignore[attr-defined]
        config = uvicorn.Config(
            app(network, store=store), host="127.0.0.1", port=0, log_level="warning"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=shutil.which("chromium"),
                    args=[
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--no-first-run",
                    ],
                )
                page = browser.new_page(viewport={"width": 1500, "height": 900})
                page.goto(f"http://127.0.0.1:{port}/")
                page.fill("#chat-input", "Write add(a, b) with a test.")
                page.click("#chat-send")
                page.wait_for_selector("#status:text('finished')")
                page.click("#timeline .row[data-index='3']")
                files = page.locator("#detail-state .state-key[data-key='files']")
                files.locator("summary").click()
                files.locator(".key-name").click()
                page.wait_for_selector("#history li.write")
                page.screenshot(path=str(ROOT / "docs" / "devui.png"), full_page=True)
                browser.close()
        finally:
            server.should_exit = True
            thread.join(10)


if __name__ == "__main__":
    main()
