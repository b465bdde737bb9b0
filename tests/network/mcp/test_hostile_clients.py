"""`agent-network mcp --transport http` under clients that break the rules: each request is
refused with the status and JSON-RPC error the SDK's Streamable HTTP transport gives, and the
server goes on serving (what docs/mcp.md says of the endpoint)."""

from __future__ import annotations

import json
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


def answer_of(response: httpx.Response) -> Any:
    """The JSON-RPC message of an answer sent as a server-sent event stream."""
    lines = response.text.split("\n")  # (not splitlines: a U+2028 in the JSON is no line end)
    (data,) = [line for line in lines if line.startswith("data: ")]
    return json.loads(data.removeprefix("data: ").rstrip("\r"))


def test_bad_bodies_are_refused_and_the_server_goes_on(client: tuple[httpx.Client, str]) -> None:
    http, url = client
    garbled = http.post(url, content=b"{not json")
    assert garbled.status_code == 400 and error_of(garbled)["code"] == -32700
    invalid = {
        "code": -32600,
        "message": "Invalid Request: not one JSON-RPC 2.0 message (batches are not supported)",
    }
    # answered as over stdio; the SDK said -32602 (invalid params) with pydantic's account
    not_one = [
        [{"jsonrpc": "2.0", "id": 2, "method": "ping"}],  # a batch: MCP has none
        {"jsonrpc": "1.0", "id": 2, "method": "ping"},  # another version's
        {"jsonrpc": "2.0", "id": 2},  # neither a request nor an answer
        {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": [1]},  # params not by name
    ]
    for body in not_one:
        refused = http.post(url, json=body)
        assert refused.status_code == 400 and error_of(refused) == invalid, body
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


def test_a_request_whose_id_mcp_cannot_use_is_answered_not_taken_for_a_notification(
    client: tuple[httpx.Client, str],
) -> None:
    """A request whose `id` is null, a fraction, a bool, an object or an array is answered 400
    `-32600` with a null id, in a session or without one, naming the kind of id; odd ids MCP
    allows are answered with the id as sent, and a notification is still accepted (202).
    Before, the SDK read the bad ones as notifications: 202, and no answer ever came."""
    http, url = client
    opened = http.post(url, json=OPENING)
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
    started = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=started, headers=session).status_code == 202
    kinds = {
        "null": "null",
        "1.5": "a number with a fraction or an exponent",
        "1.0": "a number with a fraction or an exponent",
        "true": "a boolean",
        '{"a": 1}': "an object",
        "[1]": "an array",
    }
    for written, kind in kinds.items():
        body = '{"jsonrpc": "2.0", "id": ' + written + ', "method": "tools/list"}'
        for headers in (session, {}):
            refused = http.post(url, content=body.encode(), headers=headers)
            assert refused.status_code == 400, (written, refused.text)
            message = f"Invalid Request: the id must be a string or an integer, got {kind}"
            assert error_of(refused) == {"code": -32600, "message": message}
    # an error answer with a null id (JSON-RPC allows it) is an answer: never answered
    answer = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}}
    assert http.post(url, json=answer, headers=session).status_code == 202
    # refused by its headers first, as before: a web page elsewhere is told 403
    unread = http.post(url, content=body.encode(), headers={"Origin": "http://evil.example"})
    assert unread.status_code == 403
    for ident in (10**30, -5, 'a"\u0000\n\u2028b', ""):
        ping = {"jsonrpc": "2.0", "id": ident, "method": "ping"}
        answered = http.post(url, json=ping, headers=session)
        assert answered.status_code == 200, answered.text
        assert answer_of(answered) == {"jsonrpc": "2.0", "id": ident, "result": {}}
