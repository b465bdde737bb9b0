"""`network.a2a.app`'s card and route options are checked when the app is made: a wrong type
failed with an `AttributeError` or a protobuf `TypeError` naming nothing, and a `url` that is
no http(s) URL was put in the agent card (`ftp://...`) or, empty, taken for none."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.types import HTTPAuthSecurityScheme, SecurityScheme

from network.a2a import app
from network.errors import ConfigurationError
from tests.network.a2a.team import network


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"path": 5}, "path"),
        ({"url": 5}, "url"),
        ({"url": ""}, "url"),
        ({"url": "ftp://agents.example/a2a"}, "url"),
        ({"url": "https:///a2a"}, "url"),
        ({"description": 5}, "description"),
        ({"security": 5}, "security"),
        ({"security": {"bearer": {"type": "http"}}}, "security\\['bearer'\\]"),
        ({"rest": "no"}, "rest"),
    ],
)
def test_bad_card_and_route_options_are_refused_when_made(
    options: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"app: {field}"):
        app(network, **options)


def test_good_card_options_are_taken() -> None:
    scheme = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
    served = app(
        network,
        path="/a2a",
        url="https://agents.example/a2a",
        description="A till.",
        security={"bearer": scheme},
        rest=False,
    )
    card = served.state.card
    assert card.description == "A till." and "bearer" in card.security_schemes
