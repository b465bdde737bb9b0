"""A client that announces a body and leaves before sending it all, on the A2A server (real
uvicorn on 127.0.0.1): no error is logged (it was starlette's ClientDisconnect traceback, once
per such client: a log flood at will) and the server answers the next client."""

from __future__ import annotations

import time

import httpx

from agents import Agent, ScriptedModel
from network import Network
from network.a2a import app
from tests.network.agui.live import leave_mid_body, serve, server_errors


def test_a_client_gone_while_sending_its_body_logs_no_error() -> None:
    model = ScriptedModel(lambda request: "ok")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]))
    with serve(asgi, lifespan="on") as url, server_errors() as errors:
        for _ in range(3):
            leave_mid_body(int(url.rsplit(":", 1)[1]), "/")
        card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=10)
        assert card.status_code == 200
        time.sleep(0.3)
    assert [r.getMessage() for r in errors] == []
    assert model.requests == []
