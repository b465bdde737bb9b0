"""docs/copilotkit.md's Node runtime, run for real: CopilotKit's runtime (`@copilotkit/runtime`
1.75.0, pinned in tests/copilotkit/package-lock.json) with an `HttpAgent` pointed at the AG-UI
server, each in its own process on 127.0.0.1, driven over HTTP the way CopilotKit's frontend
drives the runtime (`POST /api/copilotkit/agent/default/run`).

The React hooks themselves (`useAgent`, `useCoAgent`, `useHumanInTheLoop`, ...) are not run:
they need a browser and React. The runtime's path is what these tests show: shared state sent
by the client reaches the tools, state deltas and text come back, a confirmation interrupt
and its resume cross the runtime both ways, and a frontend tool (`useFrontendTool`) goes round
through CopilotKit's own frontend core (`@copilotkit/core`, which the hooks run on, installed
with the runtime). Needs node (>= 20) and `npm ci` in tests/copilotkit
(scripts/install-test-deps.sh does it).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonpatch  # type: ignore[import-untyped]
import pytest
import structlog

from agents import Agent, ScriptedModel
from network import Network
from network.agui import Unauthorized, app
from tests.fakes.processes import node_with
from tests.network.agui.live import serve
from tests.network.agui.networks import booking_network, booking_script
from tests.network.agui.protocol import parse_sse

RUNTIME_DIR = Path(__file__).parent / "copilotkit"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"copilotkit_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BOOKING_MODEL = ScriptedModel(booking_script)  # calls the client's tool, then answers
SIGNED_IN: list[tuple[str, str | None]] = []  # (user, x-tenant) the /private app let in


def authorize(request: Any, thread_id: str | None) -> str:
    """/private's hook: the user of a bearer token (docs/copilotkit.md's "Users")."""
    user = {"Bearer token-of-alice": "alice"}.get(request.headers.get("authorization", ""))
    if user is None:
        raise Unauthorized("sign in first")
    SIGNED_IN.append((user, request.headers.get("x-tenant")))
    return user


@pytest.fixture(scope="module")
def agent_server() -> Iterator[str]:
    """Both examples' networks, and a network whose model calls the client's tool, served
    over AG-UI (uvicorn, 127.0.0.1), one path each."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    apps = {
        "/weather": app(example("weather_state_agui").build_network(), path="/weather"),
        "/release": app(example("supervisor_approval").build_network(), path="/release"),
        "/booking": app(booking_network(BOOKING_MODEL), path="/booking"),
        "/private": app(
            Network("private", agents=[Agent("a", model=ScriptedModel(lambda r: "Hello, alice."))]),
            path="/private",
            authorize=authorize,
        ),
    }

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        await apps[scope["path"]](scope, receive, send)

    with serve(asgi) as url:
        yield url
    structlog.reset_defaults()


def start_runtime(agent_url: str) -> tuple[subprocess.Popen[str], str]:
    """tests/copilotkit/server.mjs (the recipe's file) with its agent at `agent_url`."""
    node = node_with("@copilotkit/runtime", RUNTIME_DIR)
    env = {
        **os.environ,
        "AGENT_URL": agent_url,
        "PORT": "0",
        "COPILOTKIT_TELEMETRY_DISABLED": "true",  # no network but loopback
        "DO_NOT_TRACK": "1",
    }
    process = subprocess.Popen(
        [node, "server.mjs"],
        cwd=RUNTIME_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # "CopilotKit runtime on http://127.0.0.1:PORT/api/..."
    if "CopilotKit runtime on " not in line:
        process.kill()
        pytest.fail(f"the CopilotKit runtime did not start: {line}{process.stdout.read()}")
    return process, line.split("CopilotKit runtime on ", 1)[1].strip()


@pytest.fixture
def runtime_for(agent_server: str) -> Iterator[Any]:
    started: list[subprocess.Popen[str]] = []

    def start(path: str) -> str:
        process, url = start_runtime(agent_server + path)
        started.append(process)
        return url

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


def run(runtime_url: str, body: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One run through the runtime: its events, and the state a client ends up with."""
    payload = {"state": {}, "tools": [], "context": [], "forwardedProps": {}, **body}
    reply = httpx.post(
        f"{runtime_url}/agent/default/run",
        json=payload,
        headers={"accept": "text/event-stream"},
        timeout=60,
    )
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(reply.text)
    state: dict[str, Any] = {}
    for event in events:
        if event["type"] == "STATE_SNAPSHOT":
            state = event["snapshot"]
        elif event["type"] == "STATE_DELTA":
            state = jsonpatch.apply_patch(state, event["delta"])
    return events, state


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def test_the_runtime_lists_the_agent_and_relays_shared_state(runtime_for: Any) -> None:
    url = runtime_for("/weather")
    info = httpx.get(f"{url}/info", timeout=30).json()
    assert info["version"] == "1.75.0" and "default" in info["agents"]
    message = {"id": "m1", "role": "user", "content": "What is the weather in Paris?"}
    # shared state written by the UI (useCoAgent's setState) reaches the tool
    events, state = run(
        url,
        {
            "threadId": "ck-weather",
            "runId": "r1",
            "state": {"user:temperature_unit": "Fahrenheit"},
            "messages": [message],
        },
    )
    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert "TOOL_CALL_START" in types and "TOOL_CALL_RESULT" in types
    assert "Paris: sunny, 64 degrees Fahrenheit" in text_of(events)
    assert state["user:temperature_unit"] == "Fahrenheit"
    assert state["last_city"] == "Paris"
    assert state["app:weather_requests"] == 1
    assert events[-1]["result"]["stopReason"] == "router_finished"


def test_a_confirmation_interrupt_and_its_resume_cross_the_runtime(runtime_for: Any) -> None:
    url = runtime_for("/release")
    message = {"id": "m1", "role": "user", "content": "Write the note and publish it."}
    events, state = run(
        url,
        {
            "threadId": "ck-release",
            "runId": "r1",
            "state": {"audience": "engineers"},
            "messages": [message],
        },
    )
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["outcome"]["type"] == "interrupt"
    (interrupt,) = finished["outcome"]["interrupts"]
    assert interrupt["reason"] == "confirmation_required"
    assert interrupt["metadata"]["tool"] == "publish"
    assert "published" not in state
    resumed, after = run(
        url,
        {
            "threadId": "ck-release",
            "runId": "r2",
            "messages": [],
            "resume": [
                {
                    "interruptId": interrupt["id"],
                    "status": "resolved",
                    "payload": {"approved": True},
                }
            ],
        },
    )
    results = [e for e in resumed if e["type"] == "TOOL_CALL_RESULT"]
    assert [r["toolCallId"] for r in results] == [interrupt["toolCallId"]]
    assert resumed[-1]["type"] == "RUN_FINISHED"
    assert resumed[-1]["result"]["stopReason"] == "router_done"
    assert after["published"]["title"] == "SQLite threads"


def in_copilotkits_core(
    url: str, scenario: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """tests/copilotkit/frontend_tool.mjs's `scenario`, run against the runtime at `url`
    (`headers`: those of `<CopilotKit headers={...}>`); what the core's agent ended with (it
    failed on any error or warning of the core)."""
    node = node_with("@copilotkit/core", RUNTIME_DIR)
    done = subprocess.run(
        [node, "frontend_tool.mjs", url, scenario],
        cwd=RUNTIME_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "COPILOTKIT_TELEMETRY_DISABLED": "true",
            "DO_NOT_TRACK": "1",
            "CK_HEADERS": json.dumps(headers or {}),
        },
    )
    assert done.stdout, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    assert seen["error"] is None and seen["warnings"] == [], seen
    return seen


def test_a_frontend_tool_runs_in_copilotkits_own_core_and_the_model_reads_its_result(
    runtime_for: Any,
) -> None:
    # What useFrontendTool does, by CopilotKit's frontend core itself (tests/copilotkit/
    # frontend_tool.mjs): it declares the tool, the model calls it, the core runs the handler
    # and sends the result with the next run through the runtime, and the server takes it.
    seen = in_copilotkits_core(runtime_for("/booking"), "tool")
    assert seen["handled"] == [{"date": "2026-12-24", "guests": 2}]
    roles = [(m["role"], m["toolCalls"], m["content"]) for m in seen["messages"]]
    answer = "confirmed by the user for 2026-12-24"
    assert roles == [
        ("user", [], "Book a room for Christmas eve."),
        ("assistant", ["confirm_booking"], None),
        ("tool", [], answer),
        ("assistant", [], f"Booked: {answer}"),
    ]
    first, second = BOOKING_MODEL.requests[-2:]  # the model read the handler's result
    assert [t["function"]["name"] for t in first.tools] == ["confirm_booking"]
    assert second.history[-1].role == "tool" and second.history[-1].content == answer


def test_copilotkits_core_holds_the_interrupt_and_its_resume_runs_the_tool(
    runtime_for: Any,
) -> None:
    seen = in_copilotkits_core(runtime_for("/release"), "interrupt")
    (interrupt,) = seen["interrupts"]
    assert interrupt["reason"] == "confirmation_required"
    assert interrupt["metadata"]["tool"] == "publish"
    assert seen["pending"] == []  # answered, exactly once
    assert seen["state"]["published"]["title"] == "SQLite threads"
    results = [m for m in seen["messages"] if m["role"] == "tool"]
    assert interrupt["toolCallId"] in [m["toolCallId"] for m in results]


def test_the_browsers_authorization_header_reaches_the_authorize_hook(runtime_for: Any) -> None:
    # docs/copilotkit.md, "Users": the runtime forwards the page's Authorization (and x-*)
    # headers to the agent-network server, so the hook sees the user, not the runtime
    url = runtime_for("/private")
    message = {"id": "m1", "role": "user", "content": "Hello."}
    events, _ = run(url, {"threadId": "ck-anonymous", "runId": "r1", "messages": [message]})
    assert events[-1]["type"] == "RUN_ERROR" and "401" in events[-1]["message"]
    assert SIGNED_IN == []
    headers = {"Authorization": "Bearer token-of-alice", "X-Tenant": "acme"}
    seen = in_copilotkits_core(url, "chat", headers)
    assert seen["messages"][-1] == {
        "role": "assistant",
        "content": "Hello, alice.",
        "toolCalls": [],
        "toolCallId": None,
    }
    assert SIGNED_IN[-1] == ("alice", "acme")


def test_the_pages_server_is_the_file_the_tests_run() -> None:
    """docs/copilotkit.md shows tests/copilotkit/server.mjs (its comments aside): what the
    tests above run is what a reader copies."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "copilotkit.md").read_text()
    shown = page.split("```js\n", 1)[1].split("```", 1)[0]
    ran = (RUNTIME_DIR / "server.mjs").read_text().splitlines(keepends=True)
    assert shown == "".join(line for line in ran if not line.startswith("//"))
    packages = json.loads((RUNTIME_DIR / "package.json").read_text())["dependencies"]
    install = page.split("```bash\nnpm install ", 1)[1].split("\n", 1)[0].split()
    assert sorted(install) == sorted(f"{name}@{version}" for name, version in packages.items())
