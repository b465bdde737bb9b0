"""A message that answers its task's approval (`answers`) and also says something new: the
approved call runs once, its result follows its call, then comes the new text, with no "Not
run" result for the call. Real HTTP on 127.0.0.1, on the default store (a `MemoryStore`:
the admission every thread store goes through, `StoredAdmission`; SQLite and PostgreSQL are
the AG-UI test's, `tests/network/agui/test_resume_with_message.py`: the SDK's task table can
be declared once per process, so an SQL-backed A2A app runs in its own process elsewhere)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agents import Agent, ScriptedModel, call, tool
from network import Network
from network.a2a import app
from tests.network.agui.live import serve

pytestmark = pytest.mark.usefixtures("quiet_logs")
HEADERS = {"a2a-version": "1.0"}


def till(paid: list[int]) -> tuple[Network, ScriptedModel]:
    @tool(requires_confirmation=True)
    def pay(amount: int) -> str:
        """Pay `amount`."""
        paid.append(amount)
        return f"paid {amount}"

    def script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return f"done: {last.content}"
        if str(last.content).startswith("pay "):
            return call("pay", amount=int(str(last.content).split()[1]))
        return f"noted: {last.content}"

    model = ScriptedModel(script)
    cashier = Agent("cashier", model=model, tools=[pay])

    def route(ctx: Any) -> Any:
        last = ctx.last_result
        return cashier if last is None or last.tool_calls else None

    return Network("till", agents=[cashier], router=route), model


def send(http: httpx.Client, number: int, parts: list[Any], task_id: str = "") -> Any:
    message: dict[str, Any] = {"messageId": f"m{number}", "role": "ROLE_USER", "parts": parts}
    if task_id:
        message |= {"taskId": task_id, "contextId": "c1"}
    else:
        message["contextId"] = "c1"
    body = {"jsonrpc": "2.0", "id": number, "method": "SendMessage", "params": {"message": message}}
    answer = http.post("/", json=body, headers=HEADERS).json()
    assert "result" in answer, answer
    return answer["result"]["task"]


def test_answers_with_text_run_the_call_first_then_the_text() -> None:
    paid: list[int] = []
    network, model = till(paid)
    asgi = app(network)
    with serve(asgi, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as http:
        waiting = send(http, 1, [{"text": "pay 5"}])
        assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        (asked,) = [p["data"] for p in waiting["status"]["message"]["parts"] if "data" in p]
        (interrupt,) = asked["interrupts"]
        answers = {"answers": [{"interrupt": interrupt["id"], "approved": True}]}
        parts = [{"data": answers}, {"text": "and a receipt, please"}]
        done = send(http, 2, parts, waiting["id"])
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert paid == [5]  # exactly once
    history = model.requests[-1].history
    (made,) = history[1].tool_calls
    shape = [
        (m.role, m.tool_call_id if m.role == "tool" else m.content)
        for m in history
        if m.role != "assistant"
    ]
    assert shape == [
        ("user", "pay 5"),
        ("tool", made.id),
        ("user", "and a receipt, please"),
    ]
    assert history[2].content == "paid 5"
    assert not any(str(m.content).startswith("Not run") for m in history)
