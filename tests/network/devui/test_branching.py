"""`POST /api/fork` and `POST /api/rewind` over real HTTP, on an SQLite file: time travel from
the page, through the network's schema, with every body treated as hostile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from network import ThreadRef
from network.devui import app
from network.threads import SQLStore
from tests.network.agui.live import serve
from tests.network.devui.networks import codegen_network

http = httpx.Client(timeout=60)


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    db = tmp_path / "threads.db"
    network = codegen_network()
    anyio.run(lambda: network.run("Write add", thread=ThreadRef("t-1", store=db)))
    return db


def thread_ids(db: Path) -> list[str]:
    async def listed() -> list[str]:
        store = SQLStore(db)
        try:
            return sorted(info.thread_id for info in await store.list_threads())
        finally:
            await store.close()

    return anyio.run(listed)


def stored_thread(db: Path, thread_id: str) -> Any:
    async def read() -> Any:
        store = SQLStore(db)
        try:
            thread = await store.get_thread(thread_id)
            assert thread is not None
            return thread.state, len(thread.results), len(thread.messages), thread.revision
        finally:
            await store.close()

    return anyio.run(read)


def post(url: str, path: str, body: Any, **headers: str) -> httpx.Response:
    return http.post(url + path, json=body, headers=headers)


def test_a_fork_at_a_step_carries_the_edited_state_and_leaves_the_source(stored: Path) -> None:
    before = stored_thread(stored, "t-1")
    with serve(app(codegen_network(), store=stored)) as url:
        update = {"plan": "1. calc/mul.py", "topic": "multiplication"}
        answer = post(url, "/api/fork", {"thread": "t-1", "at": 1, "update": update})
        assert answer.status_code == 200, answer.text
        forked = answer.json()
        assert forked["origin"]["parent_thread_id"] == "t-1"
        assert forked["origin"]["checkpoint"] == 1 and forked["origin"]["kind"] == "fork"
        state, results, messages, _ = stored_thread(stored, forked["thread_id"])
        assert results == 2  # planner, coder: the source up to step #1
        assert messages == 4  # the request, the plan, the coder's call and its result
        assert state["plan"] == "1. calc/mul.py" and state["topic"] == "multiplication"
        assert state["files"] == {"calc/add.py": "def add(a, b):\n    return a + b\n"}
        assert "review" not in state  # the reviewer's first verdict came after step #1
        replay = http.get(url + "/api/thread", params={"id": forked["thread_id"]}).json()
        assert [step["agent"] for step in replay["steps"]] == ["planner", "coder"]
    assert stored_thread(stored, "t-1") == before  # the source is unchanged


def test_a_bad_edit_names_the_key_and_changes_nothing(stored: Path) -> None:
    before = (thread_ids(stored), stored_thread(stored, "t-1"))
    with serve(app(codegen_network(), store=stored)) as url:
        wrong_type = {"thread": "t-1", "at": 0, "update": {"files": {"a.py": 3}}}
        refused = post(url, "/api/fork", wrong_type)
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "invalid_state"
        assert refused.json()["error"]["key"] == "files"
        shared = post(url, "/api/fork", {"thread": "t-1", "at": 0, "update": {"user:x": "y"}})
        assert shared.status_code == 422
        assert "user:x" in shared.json()["error"]["message"]
        # a key JSON spells as a lone surrogate: the refusal names it, escaped (its JSON
        # answer was written as UTF-8, which has no form for it: a 500 and a traceback)
        lone = http.post(
            url + "/api/fork",
            content=b'{"thread": "t-1", "at": 0, "update": {"a\\ud800": 1}}',
            headers={"content-type": "application/json"},
        )
        assert lone.status_code == 422, lone.text
        assert lone.json()["error"]["key"] == "a\ud800"
        assert lone.json()["error"]["code"] == "invalid_state"
    assert (thread_ids(stored), stored_thread(stored, "t-1")) == before


def test_hostile_bodies_are_refused_with_the_field_named(stored: Path) -> None:
    before = (thread_ids(stored), stored_thread(stored, "t-1"))
    with serve(app(codegen_network(), store=stored)) as url:
        plain = http.post(
            url + "/api/fork",
            content=b'{"thread": "t-1", "at": 0}',
            headers={"content-type": "text/plain"},
        )
        assert plain.status_code == 415  # a cross-site form could send this without preflight
        raw = {"content-type": "application/json"}
        for body in (b"not json", b'{"thread": "t-1", "at": NaN}', b"[1]", b"[" * 100_000):
            refused = http.post(url + "/api/rewind", content=body, headers=raw)
            assert refused.status_code == 422, body[:20]
            assert refused.json()["error"]["code"] == "invalid_request"
        huge = http.post(url + "/api/fork", content=b" " * (17 * 1024 * 1024), headers=raw)
        assert huge.status_code == 413
        cases: list[tuple[str, dict[str, Any], int, str]] = [
            ("/api/fork", {"thread": "t-1", "at": True}, 422, "at"),
            ("/api/fork", {"thread": "t-1", "at": -1}, 422, "at"),
            ("/api/fork", {"thread": "t-1", "at": 1.5}, 422, "at"),
            ("/api/fork", {"thread": "t-1", "at": 10**30}, 422, "at"),
            ("/api/fork", {"thread": "t-1", "at": 0, "update": [1]}, 422, "update"),
            ("/api/fork", {"thread": "t\x00-1", "at": 0}, 422, "thread"),
            ("/api/fork", {"thread": "x" * 300, "at": 0}, 422, "thread"),
            ("/api/fork", {"thread": 7, "at": 0}, 422, "thread"),
            ("/api/fork", {"thread": "nope", "at": 0}, 404, "thread"),
            ("/api/fork", {"thread": "t-1", "at": 99}, 404, "at"),
            ("/api/rewind", {"thread": "t-1"}, 422, "to"),
            ("/api/rewind", {"thread": "nope", "to": 0}, 404, "thread"),
            ("/api/rewind", {"thread": "t-1", "to": 99}, 404, "to"),
        ]
        for path, body, status, key in cases:
            refused = post(url, path, body)
            assert refused.status_code == status, (path, body, refused.text)
            assert refused.json()["error"]["key"] == key, (path, body)
            assert "Traceback" not in refused.text
        assert http.get(url + "/api/fork").status_code == 405
    assert (thread_ids(stored), stored_thread(stored, "t-1")) == before


def test_a_rewind_reports_the_tool_calls_it_did_not_undo(stored: Path) -> None:
    with serve(app(codegen_network(), store=stored)) as url:
        answer = post(url, "/api/rewind", {"thread": "t-1", "to": 1})
        assert answer.status_code == 200, answer.text
        report = answer.json()
    assert report["thread_id"] == "t-1" and report["checkpoint"] == 1
    assert report["discarded_calls"] == 3
    undone = [(c["checkpoint"], c["tool"]) for c in report["tool_calls_not_undone"]]
    assert undone == [(2, "review"), (3, "write_files"), (4, "review")]
    assert "not undone" in report["note"]
    _, results, _, _ = stored_thread(stored, "t-1")
    assert results == 2
    _, kept, _, _ = stored_thread(stored, report["kept_as"])  # nothing deleted
    assert kept == 5
