"""`network.urls.is_http_url`: the one rule an A2A client's remote and an A2A app's published
URL are checked by."""

from __future__ import annotations

from typing import Any

import pytest

from network.urls import is_http_url


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/a2a", "https://agents.example.com", "http://[::1]:9/"]
)
def test_http_and_https_urls_with_a_host_are_taken(url: str) -> None:
    assert is_http_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "http://",  # no host
        "ftp://example.com/",
        "example.com",
        "http://exa mple.com/",  # whitespace no request line can carry
        "http://example.com/\n",
        "http://example.com:99999/",  # a port past 65535
        "http://example.com:x/",
        5,
        None,
    ],
)
def test_anything_else_is_not(url: Any) -> None:
    assert not is_http_url(url)
