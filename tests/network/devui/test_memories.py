"""The dev UI's memories: `/api/memories` lists the named user's (the hook's principal's)
memories, never another's; the page shows them and marks those a run recalled."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agents import Agent, ScriptedModel, call
from network import Network
from network.devui import app
from network.memory import Memories
from tests.network.agui.live import serve

http = httpx.Client(timeout=60)
ANN = ("travel", "users", "ann")
BOB = ("travel", "users", "bob")


def travel(memories: Memories, model: ScriptedModel | None = None) -> Network:
    agent = Agent(
        "assistant", system="You help with travel.", model=model or ScriptedModel(["ok"]),
        memory=memories,
    )  # fmt: skip
    plain = Agent("plain", model=ScriptedModel(["ok"]))
    return Network(
        "travel",
        agents=[agent, plain],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


def filled(tmp_path: Path) -> Memories:
    memories = Memories(tmp_path / "memories.db")

    async def fill() -> None:
        await memories.put(ANN, "seat", "Prefers a window seat", thread_id="t1")
        await memories.put(ANN, "diet", "Is vegetarian")
        await memories.put(BOB, "seat", "Prefers the aisle")
        await memories.close()

    # in a thread of its own: the browser tests' Playwright holds this thread's event loop
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, fill).result()
    return memories


def test_the_named_users_memories_only(tmp_path: Path) -> None:
    memories = filled(tmp_path)
    with serve(app(travel(memories), store=tmp_path / "threads.db")) as url:
        ann = http.get(url + "/api/memories", params={"user": "ann"}).json()
        assert ann["user"] == "ann"
        assert {(m["key"], m["text"]) for m in ann["memories"]} == {
            ("seat", "Prefers a window seat"),
            ("diet", "Is vegetarian"),
        }
        seat = next(m for m in ann["memories"] if m["key"] == "seat")
        assert seat["agent"] == "assistant" and seat["namespace"] == list(ANN)
        assert seat["threadId"] == "t1"
        bob = http.get(url + "/api/memories", params={"user": "bob"}).json()
        assert [m["text"] for m in bob["memories"]] == ["Prefers the aisle"]
        nobody = http.get(url + "/api/memories").json()
        assert nobody == {"user": "", "memories": []}
        one = http.get(url + "/api/memories", params={"user": "ann", "limit": "1"}).json()
        assert len(one["memories"]) == 1
        for params in ({"user": "a\x00b"}, {"user": "x" * 300}, {"user": "ann", "limit": "0"}):
            refused = http.get(url + "/api/memories", params=params)
            assert refused.status_code == 422, params
            assert refused.json()["error"]["code"] == "invalid_parameter"


def test_with_a_hook_the_principal_decides_never_the_page(tmp_path: Path) -> None:
    memories = filled(tmp_path)

    def bearer(request: Any, thread_id: str | None) -> str | None:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return {"token-bob": "bob"}.get(token)

    served = app(travel(memories), store=tmp_path / "threads.db", authorize=bearer)
    with serve(served) as url:
        asked = http.get(
            url + "/api/memories", params={"user": "ann"},
            headers={"authorization": "Bearer token-bob"},
        )  # fmt: skip
        assert [m["text"] for m in asked.json()["memories"]] == ["Prefers the aisle"]
        assert http.get(url + "/api/memories", params={"user": "ann"}).status_code == 401


def test_a_failing_store_is_a_generic_500(tmp_path: Path) -> None:
    memories = filled(tmp_path)

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("password=hunter2")

    memories.list = broken  # type: ignore[method-assign]
    with serve(app(travel(memories), store=tmp_path / "threads.db")) as url:
        failed = http.get(url + "/api/memories", params={"user": "ann"})
        assert failed.status_code == 500 and failed.json()["error"]["code"] == "store_failed"
        assert "hunter2" not in failed.text


@pytest.mark.usefixtures("quiet_logs")
def test_the_page_shows_the_users_memories_and_marks_the_recalled(
    page: Any, tmp_path: Path
) -> None:
    memories = filled(tmp_path)
    model = ScriptedModel([call("save_memory", text="Flies to Porto in May", key="trip"), "ok"])
    with serve(app(travel(memories, model), store=tmp_path / "threads.db")) as url:
        page.goto(url)
        page.wait_for_selector("#memories li.summary-note")  # no user named yet: none
        page.click("#run-options summary")
        page.fill("#user-id", "ann")
        page.dispatch_event("#user-id", "change")
        page.wait_for_selector("#memories li.memory[data-key='diet']")
        assert "Prefers the aisle" not in page.inner_text("#memories")
        page.fill("#chat-input", "Book me a window seat on a plane")
        page.click("#chat-send")
        page.wait_for_selector("#status:text('finished')")
        page.wait_for_selector("#memories li.memory[data-key='trip']")  # saved by the run
        recalled = page.locator("#memories li.recalled").all_inner_texts()
        assert any("Prefers a window seat" in text for text in recalled), recalled
        assert all("Flies to Porto" not in text for text in recalled)
