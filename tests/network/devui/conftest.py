"""The Dev UI's browser tests share one headless Chromium while they run one after another.

Launching one (Chromium and Playwright's driver) takes about 1.2 s of CPU; once per module it
was launched a dozen times a run. Under xdist every test taking `browser` runs on one worker
(`ONE_WORKER_FIXTURES` in tests/conftest.py), one after another, so it is launched once. It
is closed before any other test: while it is open, Playwright's sync API keeps an event loop
running in the test's thread, where an async test could not start its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

from tests.network.devui.browser import chromium

_open: list[tuple[AbstractContextManager[Any], Any]] = []  # (its context manager, the browser)


def _close() -> None:
    while _open:
        manager, _ = _open.pop()
        manager.__exit__(None, None, None)


@pytest.fixture
def browser() -> Any:
    """The open browser, launched if none is (or the last one died)."""
    if _open and not _open[0][1].is_connected():
        _close()
    if not _open:
        manager = chromium()
        _open.append((manager, manager.__enter__()))
    return _open[0][1]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a test's own teardown (even a failed one: a page that raised fails the `page`
    fixture's): close the browser unless the next test takes it too."""
    try:
        return (yield)
    finally:
        if nextitem is None or "browser" not in getattr(nextitem, "fixturenames", ()):
            _close()


def pytest_sessionfinish() -> None:
    _close()  # a run stopped between two browser tests (`-x`, Ctrl-C)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.set_default_timeout(30_000)  # a busy machine: behaviour is asserted, not speed
    yield opened
    context.close()
    assert errors == [], f"the page raised: {errors}"
