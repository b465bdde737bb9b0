"""`agent-network mcp --transport http` under clients that break the rules: each request is
refused with the status and JSON-RPC error the SDK's Streamable HTTP transport gives, and the
server goes on serving (what docs/mcp.md says of the endpoint)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.network.mcp.test_serve import http_server  # noqa: F401 (a fixture)

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
OPENING = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "1"},
    },
}


@pytest.fixture
def client(http_server: tuple[str, Any]) -> Iterator[tuple[httpx.Client, str]]:  # noqa: F811
    with httpx.Client(headers=HEADERS, timeout=60) as http:
        yield http, http_server[0]


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    return dict(body["error"])


def test_bad_bodies_are_refused_and_the_server_goes_on(client: tuple[httpx.Client, str]) -> None:
    http, url = client
    garbled = http.post(url, content=b"{not json")
    assert garbled.status_code == 400 and error_of(garbled)["code"] == -32700
    batch = http.post(url, json=[{"jsonrpc": "2.0", "id": 2, "method": "ping"}])
    assert batch.status_code == 400 and "error" in batch.json()  # MCP has no batches
    huge = http.post(url, content=b'{"x": "' + b"a" * 5_000_000 + b'"}')
    assert huge.status_code == 413  # over the SDK's 4 MiB; refused before it is parsed
    opened = http.post(url, json=OPENING)
    assert opened.status_code == 200 and "mcp-session-id" in opened.headers


def test_a_missing_forged_or_ended_session_is_refused(client: tuple[httpx.Client, str]) -> None:
    http, url = client
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    missing = http.post(url, json=listing)
    assert missing.status_code == 400 and error_of(missing)["code"] == -32600
    forged = http.post(url, json=listing, headers={"Mcp-Session-Id": "forged"})
    assert forged.status_code == 404 and error_of(forged)["message"] == "Session not found"
    session = http.post(url, json=OPENING).headers["mcp-session-id"]
    assert http.delete(url, headers={"Mcp-Session-Id": session}).status_code == 200
    ended = http.post(url, json=listing, headers={"Mcp-Session-Id": session})
    assert ended.status_code == 404


def test_on_loopback_another_origin_or_host_is_refused(client: tuple[httpx.Client, str]) -> None:
    """Bound to 127.0.0.1, the endpoint refuses a browser page of another origin, and a Host
    that is not this machine's (DNS rebinding), as the MCP specification asks."""
    http, url = client
    page = http.post(url, json=OPENING, headers={"Origin": "http://evil.example"})
    assert page.status_code == 403
    rebound = http.post(url, json=OPENING, headers={"Host": "evil.example"})
    assert rebound.status_code == 421
    local = http.post(url, json=OPENING, headers={"Origin": url.rsplit("/", 1)[0]})
    assert local.status_code == 200
