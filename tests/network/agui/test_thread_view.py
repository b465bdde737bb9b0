"""`GET <path>/threads/{threadId}` over real HTTP (uvicorn on loopback), in memory and on
SQLite and PostgreSQL, with two principals: a page that reloads reads its thread's state,
conversation and pending approvals, and answers an approval by the id it read, exactly once;
another principal's thread is refused as a run on it is, as unknown as a thread that never
existed; hostile ids are a clear 422; a failing store leaks nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Message
from pydantic import TypeAdapter

from network.agui import app
from network.threads import MemoryStore
from network.threads.ids import MAX_ID_LENGTH
from tests.network.agui.live import serve
from tests.network.agui.networks import recipe_network
from tests.network.agui.protocol import parse_sse, replay

pytestmark = pytest.mark.usefixtures("quiet_logs")

WHERE = ["memory", "sqlite", "postgres"]
AGUI_MESSAGES = TypeAdapter(list[Message])


def bearer(request: Any, thread_id: str | None) -> str | None:
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    return {"token-alice": "alice", "token-bob": "bob"}.get(token)


@pytest.fixture(params=WHERE)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """None (the server's memory), or a database URL the app opens and closes itself."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        return url
    return None


@pytest.fixture
def served(store: str | None) -> Iterator[tuple[str, list[Any]]]:
    """The recipe network (its tool needs confirmation) behind `bearer`; yields the base URL
    and the list the tool appends to each time it really runs."""
    calls: list[Any] = []
    asgi = app(recipe_network(confirm=True, calls=calls), authorize=bearer, store=store)
    with serve(asgi, lifespan="on") as url:
        yield url, calls


def client(url: str, token: str | None) -> httpx.Client:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=60)


def run(http: httpx.Client, payload: dict[str, Any], state: dict[str, Any]) -> Any:
    response = http.post("/", json=payload)
    assert response.status_code == 200, response.text
    return replay(parse_sse(response.text), state=state, thread_id=payload["threadId"])


def test_a_reloaded_page_reads_its_thread_and_answers_the_approval_once(
    served: tuple[str, list[Any]], store: str | None
) -> None:
    url, calls = served
    thread = f"kitchen-{uuid.uuid4().hex[:8]}"  # the PostgreSQL database is the session's
    with client(url, "token-alice") as alice, client(url, "token-bob") as bob:
        ask = {
            "threadId": thread,
            "runId": "run-1",
            "messages": [{"id": "u1", "role": "user", "content": "Pancakes, please."}],
        }
        first = run(alice, ask, {})
        (streamed,) = first.finished["outcome"]["interrupts"]
        assert calls == []

        # the page reloads: everything it knew is read back, from an endpoint it can find
        found = alice.get("/capabilities").json()["custom"]["agentNetwork"]
        assert found["threadRead"] is True
        read = alice.get(f"/threads/{thread}")
        assert read.status_code == 200, read.text
        view = read.json()
        assert view["threadId"] == thread
        assert view["state"] == first.state  # what the stream showed, the proposal included
        (pending,) = view["interrupts"]
        assert pending == streamed
        assert pending["metadata"]["tool"] == "create_recipe"
        assert pending["metadata"]["arguments"]["recipe_data"]["title"] == "Pancakes"
        if store is None:
            assert "messages" not in view  # the server's memory keeps no conversation
        else:
            messages = AGUI_MESSAGES.validate_python(view["messages"])
            assert [m.role for m in messages] == ["user", "assistant"]
            assert messages[0].id == "u1" and messages[0].content == "Pancakes, please."
            assert messages[1].tool_calls[0].id == pending["toolCallId"]

        # another principal: refused as a run on it is, the same as a thread that never was
        theirs = bob.get(f"/threads/{thread}")
        never = bob.get("/threads/never-was")
        their_run = bob.post("/", json={**ask, "runId": "run-b"})
        assert theirs.status_code == never.status_code == their_run.status_code == 404
        codes = {r.json()["error"]["code"] for r in (theirs, never, their_run)}
        assert codes == {"thread_not_found"}
        assert theirs.text.replace(thread, "X") == never.text.replace("never-was", "X")
        assert "Pancakes" not in theirs.text
        assert alice.get("/threads/never-was").status_code == 404
        anonymous = client(url, None).get(f"/threads/{thread}")
        assert anonymous.status_code == 401 and "Pancakes" not in anonymous.text

        # the approval, answered by the id the page read, with the state it read sent back
        answer = {"interruptId": pending["id"], "status": "resolved", "payload": {"approved": True}}
        resume = {
            "threadId": thread,
            "runId": "run-2",
            "messages": [],
            "state": view["state"],
            "resume": [answer],
        }
        second = run(alice, resume, view["state"])
        assert "TOOL_CALL_RESULT" in second.types and calls == ["Pancakes"]
        again = alice.post("/", json={**resume, "runId": "run-3"})
        assert again.status_code == 409 and calls == ["Pancakes"]
        assert bob.post("/", json={**resume, "runId": "run-4"}).status_code == 404
        assert calls == ["Pancakes"]

        after = alice.get(f"/threads/{thread}").json()
        assert after["interrupts"] == []
        assert after["state"]["recipe"]["title"] == "Pancakes"
        if store is not None:
            roles = [m["role"] for m in after["messages"]]
            assert roles[:3] == ["user", "assistant", "tool"]


BAD = {
    "too long": "t" * (MAX_ID_LENGTH + 1),
    "NUL": "a%00b",
    "control character": "a%1Bb",
    "empty": "",
}


def test_hostile_thread_ids_are_refused_clearly(tmp_path: Path) -> None:
    store = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    asgi = app(recipe_network(), authorize=bearer, store=store)
    with serve(asgi, lifespan="on") as url, client(url, "token-alice") as alice:
        for label, thread_id in BAD.items():
            response = alice.get(f"/threads/{thread_id}")
            assert response.status_code == 422, label
            error = response.json()["error"]
            assert (error["code"], error["key"]) == ("invalid_thread_id", "threadId"), label
            assert "Error" not in error["message"] and len(response.text) < 500, label
        # an id that is only unusual is an id like any other: not found
        for odd in ("..%2F..%2Fetc%2Fpasswd", "a/b", "%E2%9C%93"):
            response = alice.get(f"/threads/{odd}")
            assert response.status_code == 404, odd
            assert response.json()["error"]["code"] == "thread_not_found"


class BrokenStore(MemoryStore):
    async def get_thread(self, thread_id: str) -> Any:
        raise RuntimeError("connection to postgresql://admin:hunter2@db failed")


def test_a_failing_store_or_hook_tells_the_reader_nothing_of_it() -> None:
    def failing(request: Any, thread_id: str | None) -> str:
        raise RuntimeError("token table at postgresql://admin:hunter2@db is gone")

    with serve(app(recipe_network(), store=BrokenStore())) as url, client(url, None) as http:
        response = http.get("/threads/t1")
        assert response.status_code == 500
        assert response.json()["error"]["code"] == "store_failed"
        assert "hunter2" not in response.text and "postgresql" not in response.text
    with serve(app(recipe_network(), authorize=failing)) as url, client(url, None) as http:
        response = http.get("/threads/t1")
        assert response.status_code == 500 and "hunter2" not in response.text
