"""Headless Chromium from Debian's packages, driven by Playwright (which never downloads one).

`scripts/install-test-deps.sh` installs the `chromium` package; Playwright for Python only
drives it through `executable_path`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """The system Chromium; a clear failure when scripts/install-test-deps.sh did not run."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("no chromium on PATH: run scripts/install-test-deps.sh")
    return path


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium browser (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def run_async(function: Any) -> Any:
    """`anyio.run(function)` in a thread of its own: Playwright's sync API keeps an event loop
    running in the test's thread, where another one cannot start."""
    import threading

    import anyio

    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = anyio.run(function)
        except BaseException as error:  # handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def stored_threads(db: Any) -> dict[str, Any]:
    """Every thread stored in the SQLite file `db`, by id (read from the test's thread)."""
    from network.threads import SQLStore

    async def read() -> dict[str, Any]:
        store = SQLStore(db)
        try:
            found = {}
            for info in await store.list_threads():
                found[info.thread_id] = await store.get_thread(info.thread_id)
            return found
        finally:
            await store.close()

    return run_async(read)
