"""AG-UI 1.0's `approve_with_edits`: a resume entry whose payload carries the edited arguments.

The edited call is what runs; an edit the tool's schema refuses is a 422 naming the field,
and the interrupt stays pending.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from network.agui import app
from tests.network.agui.networks import recipe_network
from tests.network.agui.protocol import events

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

WAFFLES = {"title": "Waffles", "steps": ["mix", "bake"], "minutes": 12}


def request(run: str, text: str | None = "go", **extra: Any) -> dict[str, Any]:
    messages = [{"id": f"{run}-u", "role": "user", "content": text}] if text else []
    return {"threadId": "t", "runId": run, "messages": messages, **extra}


def edited(interrupt_id: str, arguments: Any) -> list[dict[str, Any]]:
    payload = {"approved": True, "editedArgs": arguments}
    return [{"interruptId": interrupt_id, "status": "resolved", "payload": payload}]


@asynccontextmanager
async def waiting_on_approval(
    calls: list[str] | None = None,
) -> AsyncIterator[tuple[Any, httpx.AsyncClient, dict[str, Any]]]:
    """The recipe network served, a client, and the approval its first run waits on."""
    asgi = app(recipe_network(confirm=True, calls=calls))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=asgi), base_url="http://t", timeout=30
    ) as http:
        first = events(await http.post("/", json=request("r1")))
        (interrupt,) = first[-1]["outcome"]["interrupts"]
        yield asgi, http, interrupt


async def test_an_approval_with_edits_runs_the_edited_call() -> None:
    calls: list[str] = []
    async with waiting_on_approval(calls) as (asgi, http, interrupt):
        assert "editedArgs" in interrupt["responseSchema"]["properties"]

        bad = await http.post(
            "/", json=request("r2", text=None, resume=edited(interrupt["id"], {"recipe_data": 7}))
        )
        assert bad.status_code == 422
        error = bad.json()["error"]
        assert error["code"] == "invalid_resume" and "recipe_data" in error["message"]
        assert asgi.state.threads.peek("t").interrupts[0].id == interrupt["id"]  # still pending

        second = events(
            await http.post(
                "/",
                json=request(
                    "r3", text=None, resume=edited(interrupt["id"], {"recipe_data": WAFFLES})
                ),
            )
        )
    assert calls == ["Waffles"]  # the edited call ran, once; the model's never did
    (result,) = [e for e in second if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == interrupt["toolCallId"] and result["content"] == "saved Waffles"


async def test_edits_come_only_with_an_approval() -> None:
    async with waiting_on_approval() as (_, http, interrupt):
        payload = {"approved": False, "editedArgs": {"recipe_data": WAFFLES}}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        refused = await http.post("/", json=request("r2", text=None, resume=resume))
    assert refused.status_code == 422 and "editedArgs" in refused.json()["error"]["message"]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e999"])
async def test_an_edit_holding_a_non_finite_number_is_refused_naming_the_field(
    number: str,
) -> None:
    calls: list[str] = []
    async with waiting_on_approval(calls) as (asgi, http, interrupt):
        resume = edited(interrupt["id"], {"recipe_data": {**WAFFLES, "minutes": "@"}})
        # the JSON literal as a client may send it (json.dumps would write "@" quoted)
        body = json.dumps(request("r2", text=None, resume=resume)).replace('"@"', number)
        bad = await http.post("/", content=body, headers={"content-type": "application/json"})
    assert bad.status_code == 422, bad.text
    error = bad.json()["error"]
    assert error["code"] == "invalid_resume"
    assert "recipe_data: Input should be a finite number" in error["message"]
    assert "at ['minutes']" in error["message"]
    assert calls == []  # the tool never ran
    assert asgi.state.threads.peek("t").interrupts[0].id == interrupt["id"]  # still pending
