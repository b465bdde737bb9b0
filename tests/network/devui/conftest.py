from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.network.devui.browser import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


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
