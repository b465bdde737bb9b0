"""The `client` fixture: a test taking it runs once on each HTTP client (`clients`); its
litellm run is marked `litellm` (tests/conftest.py: on the one worker that imports it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.agents.models.clients import CLIENT_IDS, CLIENTS


@pytest.fixture(
    params=[
        pytest.param(make, id=name, marks=[pytest.mark.litellm] if name == "litellm" else [])
        for make, name in zip(CLIENTS, CLIENT_IDS, strict=True)
    ]
)
def client(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """`native` or `through_litellm`: call it with the server's base URL and options."""
    return request.param  # type: ignore[no-any-return]
