"""Runs from the dev UI as a user: the `x-agent-network-user` header, over HTTP and from the
page's run options in Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from network.devui import app
from tests.network.agui.live import serve
from tests.network.devui.networks import codegen_network

http = httpx.Client(timeout=60)


def run(url: str, thread_id: str, user: str | bytes | None, run_id: str = "r1") -> httpx.Response:
    headers = {} if user is None else {"x-agent-network-user": user}
    body = {
        "threadId": thread_id,
        "runId": run_id,
        "messages": [{"id": f"m-{run_id}", "role": "user", "content": "Write add"}],
    }
    return http.post(url + "/agui/", json=body, headers=headers)


def test_a_thread_started_as_a_user_is_that_users(tmp_path: Path) -> None:
    with serve(app(codegen_network(), store=tmp_path / "t.db")) as url:
        started = run(url, "t-alice", "alice")
        assert started.status_code == 200 and '"type":"RUN_FINISHED"' in started.text
        for other in (None, "bob"):  # anonymous, or another user: as if it did not exist
            refused = run(url, "t-alice", other, run_id="r2")
            assert refused.status_code == 404, other
            assert refused.json()["error"]["code"] == "thread_not_found"
        for bad in ("", "x" * 300):
            refused = run(url, "t-other", bad)
            assert refused.status_code == 422
            assert refused.json()["error"]["key"] == "x-agent-network-user"
        again = run(url, "t-alice", "alice", run_id="r3")
        assert again.status_code == 200 and '"type":"RUN_FINISHED"' in again.text
        anonymous = run(url, "t-anon", None)  # no header: the anonymous server, as before
        assert anonymous.status_code == 200


def test_a_user_named_outside_ascii_is_read_from_the_headers_utf8_bytes(tmp_path: Path) -> None:
    """The page sends the name's UTF-8 bytes (a browser refuses a header character above
    U+00FF); a Latin-1 name from another client stays as it was read."""
    store = tmp_path / "t.db"
    with serve(app(codegen_network(), store=store, run_on_store=True)) as url:
        for user, sent in (("山田", "山田".encode()), ("José", "José".encode("latin-1"))):
            started = run(url, f"t-{len(sent)}", sent)
            assert started.status_code == 200 and '"type":"RUN_FINISHED"' in started.text
            assert run(url, f"t-{len(sent)}", sent, run_id="r2").status_code == 200
            listed = http.get(url + "/api/thread", params={"id": f"t-{len(sent)}"}).json()
            assert listed.get("user_id") == user, listed


def test_the_page_runs_a_thread_as_the_user_it_names(page: Any, tmp_path: Path) -> None:
    with serve(app(codegen_network(), store=tmp_path / "t.db")) as url:
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='coder']")
        sent: list[dict[str, str]] = []
        page.on("request", lambda r: sent.append(r.headers) if r.url.endswith("/agui/") else None)
        page.click("#run-options summary")
        page.fill("#user-id", "alice 山田")  # a header carries no character above U+00FF
        as_sent = "alice 山田".encode().decode("latin-1")  # its UTF-8 bytes, one character each
        page.fill("#chat-input", "Write an add function")
        page.click("#chat-send")
        page.wait_for_selector("#status:text('finished')")
        assert sent and sent[0].get("x-agent-network-user") == as_sent
        thread_id = page.inner_text("#source").removeprefix("live thread ").strip()
        refused = run(url, thread_id, None, run_id="r-anon")
        assert refused.status_code == 404  # the page's thread is alice's
        owner = run(url, thread_id, "alice 山田".encode(), run_id="r-owner")
        assert owner.status_code == 200, owner.text  # and the server read the name whole
        page.fill("#user-id", "bob")  # read when a thread's first run starts: not mid-thread
        page.fill("#chat-input", "Once more")
        with page.expect_request(lambda r: r.url.endswith("/agui/")) as second:
            page.click("#chat-send")
        assert second.value.headers.get("x-agent-network-user") == as_sent
        page.wait_for_selector("#status:text('finished')")
