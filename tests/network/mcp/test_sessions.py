"""The MCP server's Streamable HTTP sessions are bounded (`network.mcp.sessions`): at most
`max_sessions` held, an idle one forgotten after `session_idle_timeout`, and a session over
the limit refused as the server's other refusals (503 `server_busy`, `Retry-After`, a
JSON-RPC error), over real HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from network.errors import ConfigurationError
from network.mcp import serve_mcp
from network.mcp.sessions import MAX_DEFAULT_SESSIONS, default_max_sessions
from tests.network.mcp.team import network

pytestmark = pytest.mark.anyio

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "stranger", "version": "0"},
    },
}


class Served:
    """A `serve_mcp` HTTP server of this process, and a plain HTTP client of it."""

    def __init__(self, url: str, http: httpx.AsyncClient) -> None:
        self.url = url
        self.http = http

    async def open(self) -> httpx.Response:
        """An `initialize` with no session id: a new session, or a refusal."""
        return await self.http.post(self.url, json=INITIALIZE, headers=HEADERS)

    async def ping(self, session: str) -> httpx.Response:
        headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        body = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        return await self.http.post(self.url, json=body, headers=headers)

    async def close(self, session: str) -> httpx.Response:
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        return await self.http.delete(self.url, headers=headers)


@contextlib.asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[Served]:
    async with anyio.create_task_group() as group:
        ready = anyio.Event()
        urls: list[str] = []

        def on_ready(url: str) -> None:
            urls.append(url)
            ready.set()

        group.start_soon(
            lambda: serve_mcp(network, transport="http", port=0, on_ready=on_ready, **options)
        )
        with anyio.fail_after(10):
            await ready.wait()
        async with httpx.AsyncClient(timeout=10) as http:
            yield Served(urls[0], http)
        group.cancel_scope.cancel()


def opened(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


def assert_busy(response: httpx.Response, limit: int) -> None:
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    error = answer["error"]
    assert error["message"] == (
        f"refused (server_busy): the server is at its limit of {limit} open MCP "
        f"{'session' if limit == 1 else 'sessions'}; try again later"
    )
    assert error["data"] == {"code": "server_busy", "retry_after": 1}


async def test_a_session_over_max_sessions_is_refused_and_a_place_comes_back() -> None:
    async with serving(max_sessions=2) as served:
        first = opened(await served.open())
        second = opened(await served.open())
        assert_busy(await served.open(), 2)
        # the sessions held are not touched by the refusal
        assert (await served.ping(first)).status_code == 200
        assert (await served.ping(second)).status_code == 200
        assert (await served.close(first)).status_code == 200
        third = opened(await served.open())  # the place the client gave back
        assert third not in (first, second)
        assert_busy(await served.open(), 2)


async def test_a_session_over_the_limit_is_refused_before_its_body_is_read() -> None:
    """The refusal needs no body: a stranger's request that declares a body and never sends
    it is answered at once (the SDK buffers a body, up to 4 MiB, before it looks at the
    session count); the modern protocol's session-less requests are not refused."""
    async with serving(max_sessions=1) as served:
        opened(await served.open())
        host, port = served.url.split("//")[1].split("/")[0].rsplit(":", 1)
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            "Content-Length: 100000\r\n\r\n"
        )
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(head.encode())
            with anyio.fail_after(5):  # before: no answer, the SDK waiting for the body
                answer = b""
                while b"\r\n\r\n" not in answer:
                    answer += await stream.receive()
        assert answer.startswith(b"HTTP/1.1 503 "), answer
        assert b"retry-after: 1" in answer.lower()


async def test_an_idle_session_is_forgotten_and_its_place_freed() -> None:
    # 1 s: the second `initialize` must come while the first session lives (0.3 s could run
    # out between two requests on a loaded machine)
    async with serving(max_sessions=1, session_idle_timeout=1.0) as served:
        idle = opened(await served.open())
        assert_busy(await served.open(), 1)
        with anyio.fail_after(20):
            # (a ping is a request: each keeps the session alive 1 s more)
            await anyio.sleep(2)
            while (await served.ping(idle)).status_code != 404:  # the SDK's answer to a gone id
                await anyio.sleep(2)
        opened(await served.open())


async def test_an_mcp_client_reads_the_refusal_by_its_code() -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    # the SDK's own client, with the handshake that opens a session (IDEs' clients do)
    async with serving(max_sessions=1) as served:
        opened(await served.open())
        with pytest.raises(BaseExceptionGroup) as caught:  # (the client's task group's)
            async with Client(served.url, mode="legacy"):
                pass
        refused = caught.value.subgroup(MCPError)
        assert refused is not None
        (error,) = leaves(refused)
        assert str(error).startswith("refused (server_busy): the server is at its limit of 1")
        # and with room, the same client goes in
        async with serving(max_sessions=1) as roomy, Client(roomy.url, mode="legacy") as client:
            assert (await client.list_tools()).tools[0].name == "notes_team"


def leaves(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for inner in group.exceptions for leaf in leaves(inner)]
    return [group]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_sessions": 0}, "max_sessions"),
        ({"max_sessions": 1.5}, "max_sessions"),
        ({"session_idle_timeout": 0}, "session_idle_timeout"),
        ({"session_idle_timeout": float("nan")}, "session_idle_timeout"),
    ],
)
async def test_serve_mcp_refuses_a_bad_session_limit_before_listening(
    options: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"^{named} must be"):
        await serve_mcp(network, transport="http", port=0, **options)


def test_the_default_limit_follows_the_open_file_limit(monkeypatch: Any) -> None:
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (1024, 4096))
    assert default_max_sessions() == 256
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (1_000_000, 1_000_000))
    assert default_max_sessions() == MAX_DEFAULT_SESSIONS
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (2, 2))
    assert default_max_sessions() == 1


def test_agent_network_mcp_refuses_a_bad_max_sessions(capsys: Any, quiet_logs: None) -> None:
    from network.cli.main import main

    target = "tests/network/cli/example_network.py:network"
    for option, value in (("--max-sessions", "0"), ("--session-idle-timeout", "-1")):
        status = main(["mcp", target, "--transport", "http", option, value])
        captured = capsys.readouterr()
        assert status == 2
        assert f"error: {option}: " in captured.err and "Traceback" not in captured.err


def test_agent_network_mcp_refuses_session_options_over_stdio(
    capsys: Any, quiet_logs: None
) -> None:
    from network.cli.main import main

    target = "tests/network/cli/example_network.py:network"
    for option, value in (("--max-sessions", "5"), ("--session-idle-timeout", "60")):
        assert main(["mcp", target, option, value]) == 2
        err = capsys.readouterr().err
        assert f"error: {option} is for --transport http" in err and "Traceback" not in err


async def test_the_sdks_own_refusal_is_answered_as_server_busy_when_no_count_is_read() -> None:
    # The SDK decides the race for the last place under its lock, after reading the body, with
    # a bare 503; `BusySessions` answers it as the server's other refusals. This is also what
    # a client gets should the SDK's session map (read for the refusal before the body) move.
    from network.mcp.sessions import BusySessions

    async def full_sdk(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 503, "headers": []})
        await send({"type": "http.response.body", "body": b"Service Unavailable"})

    app = BusySessions(full_sdk, 3)  # no `held`: nothing is refused before the SDK answers
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=30
    ) as client:
        assert_busy(await client.post("/mcp", json=INITIALIZE, headers=HEADERS), 3)
