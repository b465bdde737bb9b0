"""W3C trace context across hops (`network.telemetry.propagation`): one trace across a
network and the remote agents and MCP servers it calls, checked over real loopback servers
with both sides exporting to the suite's loopback OTLP receiver.

- a run's requests carry `traceparent` from its live span: A2A on every HTTP request, MCP on
  its `tools/call` (in `_meta` and as HTTP headers);
- our A2A, MCP and AG-UI servers start their run's root span as a child of a valid incoming
  `traceparent`: one trace id on both sides, the remote root's parent the caller's span;
- a malformed, oversized or all-zero `traceparent` is no parent (a new trace), never an
  error, never echoed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx
import pytest

from agents import Agent, MCPServer, ScriptedModel, call
from agents.models.a2a import A2AModel
from network import Network, Telemetry
from network.a2a import app as a2a_app
from network.agui import app as agui_app
from network.mcp import mcp_server
from network.telemetry.propagation import TraceParent, outgoing_headers, parse
from tests.network.agui.live import run_body, serve
from tests.network.telemetry.otlp import (
    Receiver,
    exporting_provider,
    received,
    receiver,
)

__all__ = ["receiver"]  # the fixture, used by name

pytestmark = pytest.mark.anyio

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
VALID = f"00-{TRACE}-{SPAN}-01"


# -- reading a traceparent ------------------------------------------------------------------


def test_a_valid_traceparent_is_read_with_its_tracestate() -> None:
    assert parse(VALID, "vendor=abc") == TraceParent(TRACE, SPAN, True, "vendor=abc")
    assert parse(f"00-{TRACE}-{SPAN}-00") == TraceParent(TRACE, SPAN, False, None)
    # a later version: its first four fields, whatever follows them after a dash
    assert parse(f"01-{TRACE}-{SPAN}-01-more") == TraceParent(TRACE, SPAN, True, None)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "garbage",
        f"00-{TRACE}-{SPAN}",  # no flags
        f"00-{TRACE.upper()}-{SPAN}-01",  # uppercase hex
        f"00-{'0' * 32}-{SPAN}-01",  # all-zero trace id
        f"00-{TRACE}-{'0' * 16}-01",  # all-zero parent id
        f"ff-{TRACE}-{SPAN}-01",  # the version that is never valid
        f"00-{TRACE}-{SPAN}-01-extra",  # version 00 has nothing after its flags
        f"01-{TRACE}-{SPAN}-01-" + "x" * 300,  # oversized
        f"00-{TRACE}-{SPAN}-01\n",
        f"00-{TRACE}-{SPAN}-0g",
        None,
        42,
    ],
)
def test_a_bad_traceparent_is_no_parent(value: Any) -> None:
    assert parse(value, "vendor=abc") is None


def test_a_tracestate_is_kept_only_valid_whole() -> None:
    kept = "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,tenant@vendor=x"
    assert parse(VALID, kept) == TraceParent(
        TRACE, SPAN, True, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x"
    )
    for bad in (
        "v=" + "a" * 600,  # oversized
        "v=a\nb",
        "Upper=1",  # keys are lowercase
        "v=1,nokey",
        "v=a=b,",  # "=" is not a value's
        ",".join(f"k{n}=v" for n in range(33)),  # more than 32 members
        7,
    ):
        assert parse(VALID, bad) == TraceParent(TRACE, SPAN, True, None), bad


def test_outside_a_span_a_request_carries_nothing() -> None:
    assert outgoing_headers() == {}
    parent = TraceParent(TRACE, SPAN, False, "v=1")
    assert outgoing_headers(parent) == {"traceparent": f"00-{TRACE}-{SPAN}-00", "tracestate": "v=1"}


# -- across real servers ----------------------------------------------------------------------


@pytest.fixture
def traced(receiver: Receiver) -> Iterator[Callable[[], tuple[Telemetry, Any]]]:
    """Makes a side's telemetry (its own provider, exporting to `receiver`); each provider
    is shut down before the receiver stops."""
    made: list[Any] = []

    def make() -> tuple[Telemetry, Any]:
        made.append(exporting_provider(receiver))
        return Telemetry(tracer_provider=made[-1]), made[-1]

    yield make
    for provider in made:
        provider.shutdown()


def spans_of(receiver: Receiver, *providers: Any) -> list[Any]:
    for provider in providers:
        provider.force_flush()
    return received(receiver)


def named(spans: list[Any], name: str) -> Any:
    (found,) = [span for span in spans if span.name == name]
    return found


def echo_network(name: str, telemetry: Telemetry) -> Network:
    agent = Agent("echo", description="Echoes.", model=ScriptedModel(lambda _request: "echoed"))
    return Network(name, agents=[agent], telemetry=telemetry)


async def test_a_remote_a2a_agents_run_continues_the_callers_trace(
    receiver: Receiver, traced: Any
) -> None:
    server_telemetry, server_provider = traced()
    client_telemetry, client_provider = traced()
    served = a2a_app(echo_network("remote-net", server_telemetry))
    with serve(served, lifespan="on") as url:
        remote = Agent("remote", description="Echoes remotely.", model=A2AModel(url))
        team = Network("caller", agents=[remote], telemetry=client_telemetry)
        result = await team.run("hello")
    assert result.trace_id is not None
    spans = spans_of(receiver, server_provider, client_provider)
    caller_span = named(spans, "invoke_agent remote")
    remote_root = named(spans, "invoke_workflow remote-net")
    assert remote_root.trace_id.hex() == result.trace_id  # one trace across both sides
    assert remote_root.parent_span_id == caller_span.span_id  # under the calling agent's span


class HeaderLog:
    """ASGI middleware keeping each POST's trace headers (what reached the server)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.seen.append({k: v for k, v in headers.items() if k.startswith("trace")})
        await self.inner(scope, receive, send)


async def test_an_mcp_servers_run_continues_the_callers_trace(
    receiver: Receiver, traced: Any
) -> None:
    server_telemetry, server_provider = traced()
    client_telemetry, client_provider = traced()
    server = mcp_server(echo_network("mcp-net", server_telemetry))
    logged = HeaderLog(server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1"))
    with serve(logged, lifespan="on") as url:
        tools = MCPServer.http(f"{url}/mcp", name="remote")
        model = ScriptedModel([call("mcp-net", input="hello"), "done"])
        boss = Agent("boss", tools=[tools], model=model)
        result = await Network("caller", agents=[boss], telemetry=client_telemetry).run("go")
    assert result.state.results[0].tool_calls[0].is_error is False
    spans = spans_of(receiver, server_provider, client_provider)
    caller_span = named(spans, "invoke_agent boss")
    remote_root = named(spans, "invoke_workflow mcp-net")
    assert remote_root.trace_id.hex() == result.trace_id
    assert remote_root.parent_span_id == caller_span.span_id
    # the tools/call POST carried it as an HTTP header too, the caller's span
    sent = f"00-{result.trace_id}-{caller_span.span_id.hex()}-01"
    assert {"traceparent": sent} in logged.seen


async def test_an_mcp_servers_run_reads_the_http_traceparent_alone(
    receiver: Receiver, traced: Any
) -> None:
    """A client that sends the header and no `_meta` (an untraced caller, here with the
    header set by hand): the served run is the header's span's child, on a thread too."""
    telemetry, provider = traced()
    server = mcp_server(echo_network("mcp-net", telemetry))
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    with serve(app, lifespan="on") as url:
        tools = MCPServer.http(f"{url}/mcp", headers={"traceparent": VALID}, name="remote")
        calls = [call("mcp-net", input="hello"), call("mcp-net", input="again", thread="t1")]
        boss = Agent("boss", tools=[tools], model=ScriptedModel([calls, "done"]))
        result = await boss.run("go")  # untraced: its calls carry no `_meta` trace context
    assert all(not record.is_error for record in result.state.results[0].tool_calls)
    spans = spans_of(receiver, provider)
    roots = [span for span in spans if span.name == "invoke_workflow mcp-net"]
    assert len(roots) == 2
    for root in roots:
        assert root.trace_id.hex() == TRACE
        assert root.parent_span_id.hex() == SPAN


@pytest.fixture
def agui(traced: Any) -> Iterator[tuple[str, Any]]:
    telemetry, provider = traced()
    with serve(agui_app(echo_network("agui-net", telemetry))) as url:
        yield url, provider


def post(url: str, run: str, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=30) as client:
        return client.post("/", json=run_body(f"t-{run}", run, "hello"), headers=headers)


async def test_an_ag_ui_run_continues_an_incoming_traceparent(
    agui: tuple[str, Any], receiver: Receiver
) -> None:
    url, provider = agui
    response = await anyio.to_thread.run_sync(
        lambda: post(url, "r1", {"traceparent": VALID, "tracestate": "vendor=abc"})
    )
    assert response.status_code == 200
    root = named(spans_of(receiver, provider), "invoke_workflow agui-net")
    assert root.trace_id.hex() == TRACE
    assert root.parent_span_id.hex() == SPAN
    assert root.trace_state == "vendor=abc"
    assert f'"traceId":"{TRACE}"' in response.text  # RUN_STARTED names the trace it joined


@pytest.mark.parametrize(
    "hostile",
    [
        "00-zz-" + "1" * 16 + "-01",
        f"00-{'0' * 32}-{SPAN}-01",
        f"00-{TRACE}-{'0' * 16}-01",
        f"00-{TRACE}-{SPAN}-01" + "-x" * 4000,
        "ff-" + VALID[3:],
    ],
)
async def test_a_hostile_traceparent_starts_a_new_trace_and_is_never_echoed(
    agui: tuple[str, Any], receiver: Receiver, hostile: str
) -> None:
    url, provider = agui
    response = await anyio.to_thread.run_sync(lambda: post(url, "r2", {"traceparent": hostile}))
    assert response.status_code == 200
    assert "RUN_FINISHED" in response.text
    root = named(spans_of(receiver, provider), "invoke_workflow agui-net")
    assert not root.parent_span_id  # a trace of its own
    assert root.trace_id.hex() not in (TRACE, "0" * 32)
    assert hostile not in response.text and hostile[:20] not in response.text
