"""Malformed JSON-RPC calls a stranger sends are answered with the error A2A names for them
(real uvicorn on 127.0.0.1, plain HTTP): invalid params (-32602) naming the field, never an
internal error (-32603) carrying a Python exception's text, nor another method's error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel
from network import Network
from network.a2a import app
from tests.network.agui.live import serve

JSON = {"content-type": "application/json"}
ONE = {**JSON, "a2a-version": "1.0"}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    model = ScriptedModel(lambda request: "ok")
    asgi = app(Network("echo", agents=[Agent("echo", model=model)]))
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def error_of(http: httpx.Client, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """The JSON-RPC error answering `body`, as JSON or as a stream's one event."""
    answer = http.post("/", content=body, headers=headers)
    text = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        (text,) = [line[len("data:") :] for line in text.splitlines() if line.startswith("data:")]
    error: dict[str, Any] = json.loads(text)["error"]
    return error


def test_a_call_naming_no_task_is_invalid_params_naming_id(http: httpx.Client) -> None:
    # GetTask, CancelTask and SubscribeToTask without an `id` (or with `params` no object)
    # looked up the task '' and answered TaskNotFoundError (-32001, "no task ''")
    for method in ("GetTask", "CancelTask", "SubscribeToTask"):
        for params in ("{}", '{"id": ""}', '["task_1"]'):
            body = f'{{"jsonrpc": "2.0", "id": 1, "method": "{method}", "params": {params}}}'
            error = error_of(http, body.encode(), ONE)
            assert error["code"] == -32602, (method, params, error)
            assert "'field': 'id'" in str(error["data"]), (method, params, error)
