"""`POST /api/replay` over real HTTP, on an SQLite file: a stored thread replayed from the
page with today's network, the report answered, every body treated as hostile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from network import ThreadRef
from network.devui import app
from tests.network.agui.live import serve
from tests.network.capabilities.replay.teams import CODER, TASK, Counts, codegen

http = httpx.Client(timeout=60)


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    db = tmp_path / "threads.db"
    anyio.run(lambda: codegen().run(TASK, thread=ThreadRef("t-1", store=db)))
    return db


def post(url: str, body: Any, **headers: str) -> httpx.Response:
    return http.post(url + "/api/replay", json=body, headers=headers)


@pytest.mark.usefixtures("quiet_logs")
def test_a_stored_thread_replays_and_a_changed_prompt_shows_its_diff(stored: Path) -> None:
    counts = Counts()
    with serve(app(codegen(counts), store=stored)) as url:
        answer = post(url, {"thread": "t-1"})
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert report["diverged"] is False and report["matched"] == 5
    assert report["tools"] == "recorded" and counts.tools == {} and counts.requests == {}
    assert "no divergence: 5 of 5 steps matched" in report["text"]
    changed = codegen(coder_prompt=CODER.replace("Python code", "careful Python code"))
    with serve(app(changed, store=stored)) as url:
        answer = post(url, {"thread": "t-1", "on_divergence": "continue", "tools": "recorded"})
    report = answer.json()
    assert report["diverged"] is True and report["firstDivergence"] == {"turn": 0, "index": 1}
    assert "+You write careful Python code. Follow the plan:" in report["text"]


@pytest.mark.usefixtures("quiet_logs")
def test_bad_bodies_and_unknown_threads_are_refused_by_name(stored: Path) -> None:
    with serve(app(codegen(), store=stored)) as url:
        for body, status, key in (
            ({"thread": "t-1", "tools": "cached"}, 422, "tools"),
            ({"thread": "t-1", "on_divergence": 1}, 422, "on_divergence"),
            ({"thread": "t-1", "routing": None}, 422, "routing"),
            ({"thread": 5}, 422, "thread"),
            ({"thread": "nope"}, 404, "thread"),
        ):
            answer = post(url, body)
            assert answer.status_code == status, (body, answer.text)
            assert answer.json()["error"]["key"] == key
        text = http.post(url + "/api/replay", content=b"thread=t-1")
        assert text.status_code == 415
        huge = http.post(
            url + "/api/replay",
            content=b'{"thread": "' + b"x" * 70_000 + b'"}',
            headers={"content-type": "application/json"},
        )
        assert huge.status_code == 413
