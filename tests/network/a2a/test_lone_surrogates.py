"""A lone surrogate in a model's answer or a tool's result (a custom `Model` or a script may
hand the run one; protobuf takes UTF-8 text only) reaches an A2A client as U+FFFD, as the
thread stores and the AG-UI stream write it: before, building the part raised
UnicodeEncodeError and the task failed with an internal error."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call
from network import Network
from network.a2a.server import app
from tests.network.agui.live import serve

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


def echo(text: str) -> str:
    """Say `text` back."""
    return text


def test_a_lone_surrogate_from_the_model_reaches_the_client_as_a_replacement_character() -> None:
    model = ScriptedModel([call("echo", text="x\udc00y"), "bad \ud800 text"])
    agent = Agent("talker", model=model, tools=[echo])
    network = Network(
        "lone", agents=[agent], router=lambda ctx: None if ctx.call_count > 1 else agent
    )
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    headers = {"content-type": "application/json", "A2A-Version": "1.0"}
    with (
        serve(app(network), lifespan="on") as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        task: dict[str, Any] = client.post("/", json=body, headers=headers).json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    (output,) = [a for a in task["artifacts"] if a["artifactId"] == "output"]
    assert output["parts"] == [{"text": "bad \ufffd text"}]
    said = [part for entry in task["history"] for part in entry["parts"]]
    (shown,) = [part["data"]["toolCall"] for part in said if "toolCall" in part.get("data", {})]
    assert shown["result"] == "x\ufffdy"
