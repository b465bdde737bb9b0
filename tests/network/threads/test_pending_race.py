"""Two processes answer the same approval at once: the store lets exactly one of them run it.

On SQLite (one file) and PostgreSQL (a real server): both processes load the thread, wait for
the same start signal and claim the approval. The tool's side effects are counted in a file:
exactly one payment, one stored result for the call, and the other process gets
`AlreadyAnsweredError` (exit code 3) having run nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from network import ThreadRef
from network.threads import SQLStore
from tests.network.threads.payments import pay_network

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(params=["sqlite", "postgres"])
def race_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    return str(request.getfixturevalue("postgres_url"))


async def test_two_processes_racing_pay_once(race_url: str, tmp_path: Path) -> None:
    thread_id = f"race-{time.time_ns()}"  # PostgreSQL's server is shared between tests
    stopped = await pay_network().run("Pay", thread=ThreadRef(thread_id, store=race_url))
    (interrupt,) = stopped.interrupts
    log, go = tmp_path / "payments.log", tmp_path / "go"
    env = {**os.environ, "PAY_LOG": str(log), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.network.threads.approval_child"]
    children = [
        subprocess.Popen(
            [*command, race_url, thread_id, interrupt.id, str(go)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    deadline = time.monotonic() + 120  # a loaded machine takes long to start Python
    while len(list(tmp_path.glob("go.ready-*"))) < 2:  # both imported and polling for `go`
        assert all(child.poll() is None for child in children), [c.communicate() for c in children]
        assert time.monotonic() < deadline, "the answering processes never got ready"
        time.sleep(0.02)
    go.touch()
    outcomes = [child.communicate(timeout=120) for child in children]
    codes = sorted(child.returncode for child in children)
    assert codes == [0, 3], outcomes
    assert "answered already" in "".join(out for out, _ in outcomes)
    assert log.read_text().splitlines() == ["100"]  # one payment, whoever won
    async with SQLStore(race_url) as store:
        thread = await store.get_thread(thread_id)
    assert thread is not None and thread.pending == []
    records = [c for r in thread.results for c in r.tool_calls if c.id == interrupt.tool_call_id]
    assert len(records) == 1 and records[0].content == "paid 100"


RESUME_FROM_PICKLE = """
import pickle, sys
import anyio
from network import ThreadRef
from tests.network.threads.payments import pay_network

stopped = pickle.loads(open(sys.argv[1], "rb").read())
(interrupt,) = stopped.interrupts
thread = ThreadRef(stopped.thread_id, store=sys.argv[2])
done = anyio.run(lambda: pay_network().run(stopped.resume([interrupt.accept()]), thread=thread))
print(done.output, type(stopped.state.results).__name__, len(stopped.messages))
"""


async def test_a_stopped_thread_run_pickles_and_resumes_in_a_fresh_process(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'threads.db'}"
    await pay_network().run("Hello", thread=ThreadRef("t1", store=url))  # a longer thread
    stopped = await pay_network().run("Pay", thread=ThreadRef("t1", store=url))
    assert stopped.stop_reason == "interrupted"
    import pickle

    path = tmp_path / "stopped.pickle"
    path.write_bytes(pickle.dumps(stopped))
    env = {**os.environ, "PAY_LOG": str(tmp_path / "payments.log"), "PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", RESUME_FROM_PICKLE, str(path), url],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["Done:", "paid", "100", "RecordLog", str(len(stopped.messages))]
    assert (tmp_path / "payments.log").read_text() == "100\n"
