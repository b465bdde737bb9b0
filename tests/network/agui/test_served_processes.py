"""`agent-network serve --store` as real server processes, driven by the pinned @ag-ui/client.

- A conversation survives a server restart (the process is killed between two turns): the
  second turn, from a client that kept nothing, gets the state and the conversation back and
  continues them; a pending approval is answered after the restart, exactly once.
- Two server processes on one PostgreSQL: while a run is under way on a thread in one, a
  second run on that thread is refused with 409 by either process (the store's lease).
- A server paused past its lease (SIGSTOP) loses the thread to another process; when it
  wakes (SIGCONT) its run stops before calling the tool its model asked for.
- A server killed before its run's first commit leaves the user's message in the thread.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from network.history.unanswered import UNFINISHED
from network.threads import SQLStore
from tests.fakes.processes import free_port, node_with, server_processes
from tests.network.agui.served_networks import CHARGE_LOG_ENV, GATE_ENV, PAY_LOG_ENV

CLIENT_DIR = Path(__file__).parent / "client"
NETWORKS = "tests/network/agui/served_networks.py"
PAUSED_TTL = 3.0  # the lease of the server a test pauses (SIGSTOP) until it is lost


@contextmanager
def serve_at_once(
    network: str, store: str, env: dict[str, str] | None, *, lease_ttls: Sequence[float]
) -> Iterator[list[Any]]:
    """One `agent-network serve --store` process per lease TTL, started at once (their
    start-ups overlap); yields them (each with `.url`); all killed after, with no shutdown:
    as a crash would leave things."""
    urls: list[str] = []
    servers: list[tuple[list[str], str]] = []
    for lease_ttl in lease_ttls:
        port = free_port()
        command = [sys.executable, "-m", "network.cli", "serve", f"{NETWORKS}:{network}"]
        command += ["--store", store, "--port", str(port), "--lease-ttl", str(lease_ttl)]
        urls.append(f"http://127.0.0.1:{port}/")
        servers.append((command, f"{urls[-1]}capabilities"))
    with server_processes(servers, env=env) as processes:
        for process, url in zip(processes, urls, strict=True):
            process.url = url  # type: ignore[attr-defined]
        yield processes


def crash(process: Any) -> None:
    """Kill -9 a served process, as a crash would, and wait for it to be gone."""
    process.kill()
    process.wait(10)


def node() -> str:
    return node_with("@ag-ui/client", CLIENT_DIR)


def turn_command(url: str, thread: str, **params: Any) -> list[str]:
    return [node(), "turn.mjs", url, thread, json.dumps(params)]


def turn(url: str, thread: str, **params: Any) -> dict[str, Any]:
    """One turn by a fresh client (nothing kept from earlier turns)."""
    done = subprocess.run(
        turn_command(url, thread, **params),
        cwd=CLIENT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    assert not seen["problems"], seen["problems"]
    return seen


def start_turn(url: str, thread: str, **params: Any) -> subprocess.Popen[str]:
    """One turn by a fresh client, started and left running."""
    return subprocess.Popen(
        turn_command(url, thread, **params),
        cwd=CLIENT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(condition: Callable[[], bool], running: subprocess.Popen[str], what: str) -> None:
    """Wait up to 30 s for `condition` while the client `running` is still running."""
    deadline = time.monotonic() + 30
    while not condition():
        assert running.poll() is None, running.communicate()
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def texts(seen: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(m["role"], m.get("content")) for m in seen["messages"]]


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "served.db")
    url: str = request.getfixturevalue("postgres_url")
    anyio.run(_empty_database, url)  # the server is shared by the session's tests
    return url


async def _empty_database(url: str) -> None:
    from sqlalchemy import text

    store = SQLStore(url)
    try:
        await store.setup()
        async with store.engine.begin() as conn:
            found = await conn.execute(
                text("SELECT tablename FROM pg_tables WHERE tablename LIKE 'agent_network_%'")
            )
            for table in found.scalars().all():
                await conn.execute(text(f'DELETE FROM "{table}"'))
    finally:
        await store.close()


def test_a_conversation_survives_a_restart(store: str) -> None:
    # the second process is started with the first (their start-ups overlap) and first
    # called once the first is dead: nothing of the first in memory
    with serve_at_once("notes", store, None, lease_ttls=[30, 30]) as (first, second):
        one = turn(first.url, "trip", message="hello", state={"topic": "birds"})
        crash(first)
        two = turn(second.url, "trip", message="again")
    assert one["finished"] and one["state"]["summary"] == "heard 1: hello"
    assert two["types"][:3] == ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"]
    assert two["state"] == {"topic": "birds", "summary": "heard 2: hello | again"}
    assert texts(two) == [
        ("user", "hello"),
        ("assistant", "heard 1: hello"),
        ("user", "again"),
        ("assistant", "heard 2: hello | again"),
    ]


def test_a_pending_approval_is_answered_after_a_restart(store: str, tmp_path: Path) -> None:
    log = tmp_path / "payments.log"
    env = {PAY_LOG_ENV: str(log)}
    with serve_at_once("payments", store, env, lease_ttls=[30, 30]) as (first, second):
        asked = turn(first.url, "bill", message="pay the bill")
        crash(first)  # the answer goes to the other process
        outcome = asked["finished"]["outcome"]
        assert outcome["type"] == "interrupt" and not log.exists()
        (pending,) = outcome["interrupts"]
        answer = [
            {"interruptId": pending["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        paid = turn(second.url, "bill", resume=answer)
        again = turn(second.url, "bill", resume=answer)
    assert paid["finished"] and paid["finished"].get("outcome", {}).get("type") != "interrupt"
    assert texts(paid)[-1] == ("assistant", "done: paid 100")
    assert again["status"] == 409
    assert len(log.read_text().splitlines()) == 1  # paid exactly once


def test_one_run_per_thread_across_two_server_processes(postgres_url: str, tmp_path: Path) -> None:
    anyio.run(_empty_database, postgres_url)
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {GATE_ENV: str(gate)}
    with serve_at_once("gated", postgres_url, env, lease_ttls=[30, 30]) as (one, two):
        running = start_turn(one.url, "shared", message="wait for it")
        try:
            wait_until(lambda: any(gate.glob("started-*")), running, "its tool never ran")
            from_other = turn(two.url, "shared", message="me too")
            from_same = turn(one.url, "shared", message="me too")
        finally:
            (gate / "release").touch()
            out, err = running.communicate(timeout=60)
        first = json.loads(out)
        assert first["finished"] and not first["problems"], (first, err)
        assert from_other["status"] == 409 and from_same["status"] == 409
        assert from_other["error"]["error"]["code"] == "thread_busy"
        after = turn(two.url, "shared", message="now me")
    assert after["finished"] and texts(after)[0] == ("user", "wait for it")
    assert len(list(gate.glob("started-*"))) == 2  # the refused runs never reached the tool


def test_the_users_message_is_kept_when_the_server_dies_before_the_first_commit(
    store: str, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {GATE_ENV: str(gate)}
    # the second process is started with the first, and called once the first is dead; the
    # first's lease (3 s) runs out soon after its death, yet is never lost to a loaded
    # machine before (1 s was, once: renewals a third of a second apart)
    with serve_at_once("gated", store, env, lease_ttls=[3, 30]) as (server, second):
        running = start_turn(server.url, "kept", message="remember me")
        try:
            wait_until(lambda: any(gate.glob("started-*")), running, "its tool never ran")
            crash(server)  # the agent call never commits
        finally:
            running.kill()
            running.communicate(timeout=30)
        thread = anyio.run(_read_thread, store, "kept")
        assert thread is not None and not thread.results  # no agent call was committed
        assert [(m.role, m.content) for m in thread.messages] == [("user", "remember me")]
        (gate / "release").touch()
        time.sleep(3.2)  # the dead process's lease (3 s) runs out
        after = turn(second.url, "kept", message="and now?")
    assert after["finished"], after
    assert [(role, text) for role, text in texts(after) if role == "user"] == [
        ("user", "remember me"),
        ("user", "and now?"),
    ]


def test_an_approved_call_whose_server_died_mid_tool_is_told_unfinished(
    store: str, tmp_path: Path
) -> None:
    """Killed after the claim and the payment, before the call's result was committed: the
    approval stays answered (a second answer is 409, the payment made once), and the next
    message gives the call a result saying its run ended before it finished, never "not run"
    (which would have the model pay again)."""
    gate = tmp_path / "gate"
    gate.mkdir()
    log = tmp_path / "payments.log"
    env = {GATE_ENV: str(gate), PAY_LOG_ENV: str(log)}
    with serve_at_once("slow_payments", store, env, lease_ttls=[3, 30]) as (server, second):
        asked = turn(server.url, "bill", message="pay the bill")
        (pending,) = asked["finished"]["outcome"]["interrupts"]
        answer = [
            {"interruptId": pending["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        running = start_turn(server.url, "bill", resume=answer)
        try:
            wait_until(lambda: any(gate.glob("paid-*")), running, "it never paid")
            crash(server)  # paid; the call's result is never committed
        finally:
            running.kill()
            running.communicate(timeout=30)
        (gate / "release").touch()
        time.sleep(3.2)  # the dead process's lease (3 s) runs out
        again = turn(second.url, "bill", resume=answer)
        after = turn(second.url, "bill", message="thanks")
    assert again["status"] == 409
    assert texts(after)[-4:] == [
        ("assistant", None),
        ("tool", UNFINISHED.format(tool="pay_slowly")),
        ("user", "thanks"),
        ("assistant", "heard: thanks"),
    ]
    assert len(log.read_text().splitlines()) == 1  # paid once


async def _read_thread(store: str, thread_id: str) -> Any:
    opened = SQLStore(store if "://" in store else f"sqlite+aiosqlite:///{store}")
    try:
        return await opened.get_thread(thread_id)
    finally:
        await opened.close()


def test_a_run_that_lost_its_lease_stops_before_its_tool_runs(store: str, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    charges = tmp_path / "charges.log"
    env = {GATE_ENV: str(gate), CHARGE_LOG_ENV: str(charges)}
    # The paused server's lease (3 s) outlives the stalls of a loaded machine until the pause;
    # with 1 s, a suite on a machine at load 16 lost it before the model was called. The
    # other's (30 s): a loaded machine never costs it its lease.
    with serve_at_once("ledger", store, env, lease_ttls=[PAUSED_TTL, 30]) as (paused, other):
        first = start_turn(paused.url, "bill", message="charge me")
        try:
            thinking = (gate / f"thinking-{paused.pid}").exists  # its model call is in flight
            wait_until(thinking, first, "the first run never called its model")
            paused.send_signal(signal.SIGSTOP)
            time.sleep(PAUSED_TTL + 0.5)  # past its lease: the thread is free for another process
            (gate / "release").touch()
            taken = turn(other.url, "bill", message="charge me, again")
            assert taken["finished"], taken
            assert charges.read_text().splitlines() == [f"{other.pid} charged"]
        finally:
            paused.send_signal(signal.SIGCONT)
        out, _ = first.communicate(timeout=60)
        time.sleep(0.5)  # anything the woken run would still do, it has done by now
        seen = json.loads(out)
        paused.kill()
        log = paused.communicate(timeout=10)[0].decode()
    # the woken run never called the tool its model asked for, and said why it stopped
    assert charges.read_text().splitlines() == [f"{other.pid} charged"]
    assert seen["error"] and seen["error"]["code"] == "LeaseLostError", seen
    assert "lost its lease on thread 'bill'" in seen["error"]["message"]
    assert seen["finished"] is None
    assert "serving.lease_lost" in log
    thread = anyio.run(_read_thread, store, "bill")
    assert [m.content for m in thread.messages if m.role == "user"] == [
        "charge me",
        "charge me, again",
    ]
    assert [r.agent for r in thread.results] == ["cashier", "cashier"]  # the other's run only
