"""The `client` fixture: a test taking it runs once on each HTTP client (`clients`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.agents.models.clients import CLIENT_IDS, CLIENTS


@pytest.fixture(params=CLIENTS, ids=CLIENT_IDS)
def client(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """`native` or `through_litellm`: call it with the server's base URL and options."""
    return request.param  # type: ignore[no-any-return]
