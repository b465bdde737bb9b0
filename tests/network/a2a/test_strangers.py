"""A caller the `authorize` hook does not know is 401 on the A2A server whatever its body
(real uvicorn on 127.0.0.1): a body the server refuses (not JSON, too large, nested too
deep) was answered 415/413/400 first, telling a stranger how a request must look. A known
caller still hears why its body was refused."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.a2a import app
from network.serving.principals import Unauthorized
from tests.network.agui.live import serve

TOKENS = {"Bearer token-alice": "alice"}


def identity_only(request: Any, thread_id: str | None) -> str:
    user = TOKENS.get(request.headers.get("authorization", ""))
    if user is None:
        raise Unauthorized("a bearer token is needed")
    return user


def test_a_stranger_is_401_whatever_its_body() -> None:
    model = ScriptedModel(lambda request: "ok")
    network = Network("echo", agents=[Agent("echo", model=model)])
    asgi = app(network, authorize=identity_only, max_body_bytes=1000)
    json_type = {"content-type": "application/json"}
    bad_bodies = [
        (b'{"jsonrpc": "2.0"}', {"content-type": "text/plain"}, 415),
        (b"[" * 300 + b"]" * 300, json_type, 400),
        (b'{"x": "' + b"y" * 2000 + b'"}', json_type, 413),
    ]
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        for content, headers, status in bad_bodies:
            for token in ({}, {"authorization": "Bearer token-eve"}):
                refused = http.post("/", content=content, headers={**headers, **token})
                assert refused.status_code == 401, (content[:20], token, refused.text)
            alice = {**headers, "authorization": "Bearer token-alice"}
            known = http.post("/", content=content, headers=alice)
            assert known.status_code == status, (content[:20], known.text)
    assert model.requests == []


def test_a_stranger_reading_tasks_over_rest_is_401_and_the_card_answers_anyone() -> None:
    # The REST binding's reads (`GET /v1/tasks...`) answered a stranger 400 INVALID_ARGUMENT
    # (the refusal's 401 only inside its details): a client could not tell it lacked a token
    model = ScriptedModel(lambda request: "ok")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]), authorize=identity_only)
    version = {"A2A-Version": "1.0"}
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        for path in ("/v1/tasks", "/v1/tasks/task-1"):
            refused = http.get(path, headers=version)
            assert refused.status_code == 401, (path, refused.text)
            assert refused.headers["www-authenticate"] == "Bearer"
            assert refused.json()["error"]["code"] == "unauthorized"
        listed = http.get("/v1/tasks", headers={**version, "authorization": "Bearer token-alice"})
        assert listed.status_code == 200, listed.text
        assert http.get("/.well-known/agent-card.json").status_code == 200


def test_a_body_that_never_arrives_whole_is_408(monkeypatch: pytest.MonkeyPatch) -> None:
    # A known caller announcing a body and never sending it whole held its connection and
    # what it had sent for as long as it liked; it now has BODY_TIMEOUT_S (30 s) to arrive.
    monkeypatch.setattr("network.serving.limits.BODY_TIMEOUT_S", 0.1)
    asgi = app(Network("echo", agents=[Agent("echo", model=ScriptedModel(["ok"]))]))
    with serve(asgi, lifespan="on") as url:
        port = int(httpx.URL(url).port or 80)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(
                b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1000\r\n\r\n{"
            )
            answer = b""
            while chunk := raw.recv(4096):  # to its end: the server closes the connection
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b'"body_timeout"' in answer
