"""With an `authorize` hook, every Streamable HTTP request to the MCP server is authorized
before the SDK sees it (`network.mcp.authorized`): a stranger opens no session (so cannot fill
`max_sessions`), and a session answers only the principal that opened it, over real HTTP on
127.0.0.1."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from network.serving.principals import Forbidden, Unauthorized
from tests.network.mcp.test_sessions import HEADERS, INITIALIZE, opened, serving

pytestmark = pytest.mark.anyio

TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}
asked: list[str | None] = []  # the thread ids the hook was asked about


def bearer(request: Any, thread_id: str | None) -> str:
    asked.append(thread_id)
    token = request.headers.get("authorization", "")
    if token == "Bearer banned-token":
        raise Forbidden("this client is banned")
    if token == "Bearer broken-token":
        raise RuntimeError("user db at postgres://admin:hunter2@db failed")
    user = TOKENS.get(token)
    if user is None:
        raise Unauthorized("a bearer token is needed")
    return user


def auth(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


async def open_as(served: Any, token: str | None) -> httpx.Response:
    return await served.http.post(served.url, json=INITIALIZE, headers={**HEADERS, **auth(token)})


async def ping_as(served: Any, session: str, token: str | None) -> httpx.Response:
    headers = {
        **HEADERS,
        **auth(token),
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
    }
    body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    return await served.http.post(served.url, json=body, headers=headers)


def assert_refused(response: httpx.Response, status: int, code: str, message: str) -> None:
    assert response.status_code == status, response.text
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["message"] == f"refused ({code}): {message}"
    assert answer["error"]["data"]["code"] == code
    assert "mcp-session-id" not in response.headers


async def test_a_stranger_opens_no_session_and_cannot_fill_the_limit() -> None:
    async with serving(max_sessions=1, authorize=bearer) as served:
        for _ in range(3):
            refused = await open_as(served, None)
            assert_refused(refused, 401, "unauthorized", "a bearer token is needed")
            assert refused.headers["www-authenticate"] == "Bearer"
            assert refused.json()["error"]["code"] == -32600
            assert refused.json()["error"]["data"] == {"code": "unauthorized", "retry_after": None}
            wrong = await open_as(served, "guessed-token")
            assert_refused(wrong, 401, "unauthorized", "a bearer token is needed")
        # the one place is still free for a client the hook lets in
        mine = opened(await open_as(served, "alice-token"))
        assert (await ping_as(served, mine, "alice-token")).status_code == 200


async def test_a_forbidden_caller_gets_403_and_a_failing_hook_500_without_its_text() -> None:
    async with serving(max_sessions=1, authorize=bearer) as served:
        banned = await open_as(served, "banned-token")
        assert_refused(banned, 403, "forbidden", "this client is banned")
        assert "www-authenticate" not in banned.headers
        broken = await open_as(served, "broken-token")
        assert_refused(broken, 500, "internal_error", "authorization failed")
        assert "hunter2" not in broken.text
        assert broken.json()["error"]["code"] == -32603
        opened(await open_as(served, "alice-token"))  # neither held the one place


async def test_a_session_answers_only_the_principal_that_opened_it() -> None:
    async with serving(authorize=bearer) as served:
        alices = opened(await open_as(served, "alice-token"))
        # another principal, knowing the id, finds no session (as a session that is not)
        theirs = await ping_as(served, alices, "bob-token")
        assert theirs.status_code == 404
        unknown = await ping_as(served, "0" * 32, "bob-token")
        assert (theirs.status_code, theirs.json()) == (unknown.status_code, unknown.json())
        nobody = await ping_as(served, alices, None)
        assert_refused(nobody, 401, "unauthorized", "a bearer token is needed")
        ended = await served.http.delete(
            served.url,
            headers={
                **auth("bob-token"),
                "mcp-session-id": alices,
                "mcp-protocol-version": "2025-06-18",
            },
        )
        assert ended.status_code == 404
        for token, status in ((None, 401), ("bob-token", 404)):  # its GET stream likewise
            headers = {
                **auth(token),
                "accept": "text/event-stream",
                "mcp-session-id": alices,
                "mcp-protocol-version": "2025-06-18",
            }
            assert (await served.http.get(served.url, headers=headers)).status_code == status
        # alice's session is as it was, and hers to end
        assert (await ping_as(served, alices, "alice-token")).status_code == 200
        headers = {**auth("alice-token"), "mcp-session-id": alices}
        assert (await served.http.delete(served.url, headers=headers)).status_code == 200


async def test_the_hook_is_asked_about_every_request_with_no_thread() -> None:
    asked.clear()
    async with serving(authorize=bearer) as served:
        session = opened(await open_as(served, "alice-token"))
        await ping_as(served, session, "alice-token")
    assert asked == [None, None]


async def test_the_sdk_client_goes_in_with_a_token_and_reads_the_refusal_without() -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    from tests.network.mcp.test_sessions import leaves

    async with serving(max_sessions=1, authorize=bearer) as served:
        with pytest.raises(BaseExceptionGroup) as caught:  # (the client's task group's)
            async with (
                httpx2.AsyncClient(timeout=10) as http,
                Client(streamable_http_client(served.url, http_client=http), mode="legacy"),
            ):
                pass
        refused = caught.value.subgroup(MCPError)
        assert refused is not None
        (error,) = leaves(refused)
        assert str(error) == "refused (unauthorized): a bearer token is needed"
        async with (
            httpx2.AsyncClient(headers=auth("alice-token"), timeout=10) as http,
            Client(streamable_http_client(served.url, http_client=http), mode="legacy") as client,
        ):
            answer = await client.call_tool("notes_team", {"input": "hi"})
            assert not answer.is_error
