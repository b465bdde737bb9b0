"""The dev UI on a real store with an `authorize` hook: no open door. Every data endpoint asks
the hook, lists and shows only the principal's threads, and runs as the principal whatever
user header the page sends; fork and rewind act on the principal's own threads only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from network.devui import app
from tests.network.agui.live import serve
from tests.network.cli.authorize_hook import authorize
from tests.network.devui.networks import codegen_network

ALICE = {"authorization": "Bearer token-alice"}
BOB = {"authorization": "Bearer token-bob"}


def run(http: httpx.Client, url: str, thread: str, headers: dict[str, str]) -> httpx.Response:
    body = {
        "threadId": thread,
        "runId": f"r-{thread}-{len(headers)}",
        "messages": [{"id": f"m-{thread}", "role": "user", "content": "Write add"}],
    }
    return http.post(url + "/agui/", json=body, headers=headers)


def test_with_authorize_each_user_sees_and_runs_only_their_own_threads(tmp_path: Path) -> None:
    served = app(codegen_network(), store=tmp_path / "t.db", run_on_store=True, authorize=authorize)
    with serve(served) as url, httpx.Client(timeout=60) as http:
        assert '"RUN_FINISHED"' in run(http, url, "alices", ALICE).text
        assert '"RUN_FINISHED"' in run(http, url, "bobs", BOB).text
        # the user header the page may send changes nothing: the hook names the user
        posing = run(http, url, "alices", {**BOB, "x-agent-network-user": "alice"})
        assert posing.status_code == 404 and posing.json()["error"]["code"] == "thread_not_found"
        assert run(http, url, "t-nobody", {}).status_code == 401

        def listed(headers: dict[str, str]) -> Any:
            return http.get(url + "/api/threads", headers=headers)

        assert [t["thread_id"] for t in listed(ALICE).json()["threads"]] == ["alices"]
        assert [t["thread_id"] for t in listed(BOB).json()["threads"]] == ["bobs"]
        refused = listed({})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        assert http.get(url + "/api/graph").status_code == 401
        assert http.get(url + "/api/server", headers=ALICE).json()["authorized"] is True
        mine = http.get(url + "/api/thread?id=alices", headers=ALICE)
        assert mine.status_code == 200 and mine.json()["steps"]
        for path in (
            "/api/thread?id=alices",
            "/api/history?thread=alices&key=files",
            "/api/value?thread=alices&step=0&part=prompt",
        ):
            theirs = http.get(url + path, headers=BOB)
            assert theirs.status_code == 404, path
            assert theirs.json()["error"]["code"] == "thread_not_found"
            assert "add" not in theirs.text.lower()
        forked = http.post(url + "/api/fork", json={"thread": "alices", "at": 0}, headers=BOB)
        rewound = http.post(url + "/api/rewind", json={"thread": "alices", "to": 0}, headers=BOB)
        assert forked.status_code == 404 and rewound.status_code == 404
        own = http.post(url + "/api/fork", json={"thread": "alices", "at": 0}, headers=ALICE)
        assert own.status_code == 200
        assert len(listed(ALICE).json()["threads"]) == 2 and len(listed(BOB).json()["threads"]) == 1


def test_without_authorize_the_local_tool_shows_every_thread(tmp_path: Path) -> None:
    served = app(codegen_network(), store=tmp_path / "t.db", run_on_store=True)
    with serve(served) as url, httpx.Client(timeout=60) as http:
        run(http, url, "one", {"x-agent-network-user": "alice"})
        run(http, url, "two", {"x-agent-network-user": "bob"})
        threads = http.get(url + "/api/threads").json()["threads"]
        assert sorted(t["thread_id"] for t in threads) == ["one", "two"]
        assert http.get(url + "/api/server").json()["authorized"] is False
