"""`--cors-origin` and `--allowed-host` values (`network.cli.web_names`): spelled as a
browser sends them, or refused when no browser's `Origin` or `Host` could ever equal them."""

from __future__ import annotations

import argparse

import pytest

from network.cli.web_names import allowed_host, cors_origin


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://app.example", "https://app.example"),
        ("HTTPS://App.Example:443", "https://app.example"),  # a browser drops the default port
        ("http://app.example:80", "http://app.example"),
        ("http://localhost:5173", "http://localhost:5173"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("chrome-extension://abcdef", "chrome-extension://abcdef"),
    ],
)
def test_an_origin_is_spelled_as_a_browser_sends_it(given: str, origin: str) -> None:
    assert cors_origin(given) == origin


@pytest.mark.parametrize(
    "given",
    [
        "https://app.example/",  # a trailing slash: never in an Origin header
        "https://app.example/app",
        "https://app.example?x=1",
        "https://app.example#top",
        "app.example",
        "*",
        "https://*.example",
        "https://user@app.example",
        "https://app.example:99999",
        " https://app.example",
        "",
    ],
)
def test_what_no_origin_header_can_equal_is_refused(given: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not an origin"):
        cors_origin(given)


@pytest.mark.parametrize(
    ("given", "host"),
    [
        ("agents.example", "agents.example"),
        ("Agents.Example", "agents.example"),
        ("*.example.com", "*.example.com"),
        ("[::1]", "[::1]"),
        ("::1", "[::1]"),  # as the Host header spells it
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_a_host_is_spelled_as_the_host_header_names_it(given: str, host: str) -> None:
    assert allowed_host(given) == host


@pytest.mark.parametrize(
    "given", ["agents.example:8443", "https://agents.example", "agents.example/", "", "a b"]
)
def test_a_host_with_a_port_scheme_or_path_is_refused(given: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a host name"):
        allowed_host(given)
