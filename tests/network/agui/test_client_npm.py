"""The server driven by the official `@ag-ui/client` HttpAgent (npm, pinned in a lockfile).

The server runs on 127.0.0.1 under uvicorn; `client/scenarios.mjs` runs every scenario with
the real client and reports what it saw. The client itself only warns about RUN_ERROR, cut
streams, mismatched run ids and patches that fail to apply, so the script checks each of
those, and this test compares the client's final state with the server's own record.

Needs node (>= 20) and `npm ci` in tests/network/agui/client (scripts/install-test-deps.sh does it).
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from agents import ScriptedModel
from network.agui import app
from tests.fakes.processes import node_with
from tests.network.agui.live import serve
from tests.network.agui.networks import (
    PANCAKES,
    booking_network,
    booking_script,
    codegen_network,
    recipe_network,
)

CLIENT_DIR = Path(__file__).parent / "client"
BOOKING_MODEL = ScriptedModel(booking_script)  # its requests are what the model read
TOAST = {"title": "Toast", "steps": ["toast the bread"], "minutes": 3}


def bearer_user(request: Any, thread_id: str) -> str | None:
    """The test's `authorize` hook: two users, known by their bearer tokens."""
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    return {"token-alice": "alice", "token-bob": "bob"}.get(token)


def _serve(apps: dict[str, Any]) -> Any:
    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        target = apps.get(scope["path"])
        if target is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await target(scope, receive, send)

    return asgi


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, dict[str, Any]]]:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    networks = {
        "/codegen": codegen_network(),
        "/recipes": recipe_network(),
        "/confirm": recipe_network(confirm=True),
        "/booking": booking_network(BOOKING_MODEL),
    }
    apps = {path: app(network, path=path) for path, network in networks.items()}
    apps["/owned"] = app(codegen_network(), path="/owned", authorize=bearer_user)
    with serve(_serve(apps)) as url:
        yield url, apps
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def report(server: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    node = node_with("@ag-ui/client", CLIENT_DIR)
    base, _ = server
    done = subprocess.run(
        [node, "scenarios.mjs", base], cwd=CLIENT_DIR, capture_output=True, text=True, timeout=60
    )
    assert done.stdout, f"no report from the client script: {done.stderr}"
    result = json.loads(done.stdout)
    assert done.returncode == 0 and not result["failures"], "\n".join(result["failures"])
    return result["scenarios"]


def server_state(server: tuple[str, dict[str, Any]], path: str, thread_id: str) -> Any:
    record = server[1][path].state.threads.peek(thread_id)
    return None if record is None else record.state


def test_codegen_run_syncs_state_through_deltas(report: dict[str, Any], server: Any) -> None:
    scenario = report["codegen"]
    (run,) = scenario["runs"]
    assert run["deltas"] >= 4 and run["types"][0] == "RUN_STARTED"
    assert run["types"].count("STEP_STARTED") == 5
    state = scenario["state"]
    assert set(state["files"]) == {"calc/add.py", "tests/test_add.py"}
    assert state["review"]["approved"] is True
    assert state == server_state(server, "/codegen", "codegen-thread")


def test_predictive_state_reaches_the_client(report: dict[str, Any], server: Any) -> None:
    scenario = report["predictive"]
    (run,) = scenario["runs"]
    types = run["types"]
    assert types[:3] == ["RUN_STARTED", "CUSTOM", "STATE_SNAPSHOT"]
    streaming = types[types.index("TOOL_CALL_START") : types.index("TOOL_CALL_END")]
    assert streaming.count("STATE_DELTA") >= 3  # while the arguments stream
    assert scenario["state"] == {"recipe": PANCAKES}
    assert scenario["state"] == server_state(server, "/recipes", "predictive-thread")


def test_confirmation_accepted(report: dict[str, Any], server: Any) -> None:
    scenario = report["confirmAccepted"]
    first, second = scenario["runs"]
    assert first["finished"]["outcome"]["type"] == "interrupt"
    assert len(scenario["interrupts"]) == 1
    assert scenario["proposal"] == {"servings": 2, "recipe": PANCAKES}
    assert "TOOL_CALL_RESULT" in second["types"]
    assert second["finished"].get("outcome", {"type": "success"})["type"] == "success"
    assert scenario["state"] == {"servings": 2, "recipe": PANCAKES}
    assert scenario["state"] == server_state(server, "/confirm", "accept-thread")


def test_confirmation_rejected(report: dict[str, Any], server: Any) -> None:
    scenario = report["confirmRejected"]
    first, second = scenario["runs"]
    assert first["finished"]["outcome"]["type"] == "interrupt"
    assert scenario["proposal"] == {"recipe": PANCAKES}  # the client's optimistic copy
    assert second["types"][2] == "STATE_SNAPSHOT"
    assert scenario["state"] == {"recipe": TOAST}  # the server's checkpoint
    assert scenario["state"] == server_state(server, "/confirm", "reject-thread")


def test_a_request_ignoring_the_interrupt_is_refused(report: dict[str, Any]) -> None:
    error = report["interruptIgnored"]["error"]
    assert error["status"] == 409 and error["unchanged"] is True
    assert error["payload"]["error"]["code"] == "interrupt_pending"


def test_client_sent_state(report: dict[str, Any], server: Any) -> None:
    scenario = report["clientState"]
    state = scenario["state"]
    assert state["topic"] == "multipliers" and state["user:language"] == "python"
    assert state["review"]["approved"] is True
    assert state == server_state(server, "/codegen", "state-thread")


def test_invalid_client_state(report: dict[str, Any], server: Any) -> None:
    scenario = report["invalidState"]
    invalid = scenario["invalid"]
    assert invalid["status"] == 422 and invalid["unchanged"] is True
    assert invalid["payload"]["error"]["key"] == "files"
    assert not server_state(server, "/codegen", "invalid-thread")
    forbidden = scenario["forbidden"]
    assert forbidden["status"] == 403 and forbidden["payload"]["error"]["key"] == "app:flags"


def test_a_client_tool_call_ends_the_run_and_its_result_reaches_the_model(
    report: dict[str, Any], server: Any
) -> None:
    scenario = report["clientTool"]
    first, second = scenario["runs"]
    call = scenario["toolCall"]
    assert call["function"]["name"] == "confirm_booking"
    assert scenario["args"] == {"date": "2026-12-24", "guests": 2}
    # the call was streamed, never run, and the run ended with success
    assert first["types"].count("TOOL_CALL_START") == 1 and "TOOL_CALL_END" in first["types"]
    assert "TOOL_CALL_RESULT" not in first["types"]
    assert first["types"][-1] == "RUN_FINISHED"
    assert first["finished"]["result"]["stopReason"] == "client_tool"
    assert "outcome" not in first["finished"] or first["finished"]["outcome"]["type"] == "success"
    # the model was offered the client's tool, and read the client's context and result
    one, two = BOOKING_MODEL.requests
    assert [t["function"]["name"] for t in one.tools] == ["confirm_booking"]
    assert one.tools[0]["function"]["parameters"]["required"] == ["date"]
    assert "user timezone: Europe/Paris" in one.system[0].content
    roles = [(m.role, getattr(m, "tool_call_id", None)) for m in two.history]
    assert roles[-2:] == [("assistant", None), ("tool", call["id"])]
    assert two.history[-2].tool_calls[0].id == call["id"]
    assert two.history[-1].content == "confirmed by the user for 2026-12-24"
    assert scenario["answer"] == "Booked: confirmed by the user for 2026-12-24"
    assert second["finished"]["result"]["stopReason"] == "router_finished"


def test_a_thread_id_alone_reads_nothing(report: dict[str, Any], server: Any) -> None:
    scenario = report["ownership"]
    assert scenario["state"]["topic"] == "alice's secret plans"
    assert scenario["state"] == server_state(server, "/owned", "alice-thread")
    stranger = scenario["stranger"]
    assert stranger["status"] == 404 and stranger["unchanged"] is True
    assert stranger["payload"]["error"]["code"] == "thread_not_found"
    assert "secret" not in json.dumps(stranger)
    assert scenario["unauthenticated"]["status"] == 401
    assert server[1]["/owned"].state.threads.peek("alice-thread").owner == "alice"
    assert "anon-thread" not in server[1]["/owned"].state.threads
