"""`app(network, observers=...)` checked (`network.agui.observers`): a value that is no
function is refused when the app is built; a call that fails refuses the request with a
generic 500 before the stream begins."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.agui import app
from network.errors import ConfigurationError
from tests.network.agui.live import serve

pytestmark = pytest.mark.usefixtures("quiet_logs")


def body(thread: str, run: str) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": "u", "role": "user", "content": "go"}],
    }


def echo_network() -> tuple[Network, ScriptedModel]:
    model = ScriptedModel(lambda request: "ok")
    return Network("echo", agents=[Agent("echo", model=model)]), model


def nothing_made(ctx: Any) -> Any:
    return None  # forgot its `return [sink]`


def observer_failed(ctx: Any) -> Any:
    raise KeyError("internal table users_v2")


@pytest.mark.parametrize("observers", [nothing_made, observer_failed, lambda ctx: [5]])
def test_observers_that_fail_are_a_generic_500_not_an_empty_stream(observers: Any) -> None:
    # Before: 200 with an empty body (no RUN_STARTED, no RUN_ERROR), the error only in a log.
    network, model = echo_network()
    asgi = app(network, observers=observers)
    with serve(asgi) as base:
        response = httpx.post(f"{base}/", json=body("t", "r"), timeout=30)
        assert response.status_code == 500 and "users_v2" not in response.text
        assert response.json()["error"]["code"] == "internal_error"
        assert "reference err_" in response.json()["error"]["message"]
        assert model.requests == [] and not asgi.state.threads.peek("t").busy
    with pytest.raises(ConfigurationError, match="observers must be a function"):
        app(network, observers=[print])  # type: ignore[arg-type]


def test_observers_sinks_see_the_run() -> None:
    seen: list[Any] = []
    network, _ = echo_network()
    with serve(app(network, observers=lambda ctx: [seen.append])) as base:
        response = httpx.post(f"{base}/", json=body("t", "r"), timeout=30)
    assert response.status_code == 200 and "RUN_FINISHED" in response.text
    assert seen and type(seen[-1]).__name__ == "RunFinishedEvent"
