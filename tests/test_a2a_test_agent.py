"""examples/a2a_test_agent.py, the deterministic agent docs/a2a.md runs the A2A test kit
against, served by the command the docs give (`agent-network serve
examples/a2a_test_agent.py:network --a2a`) and driven by the official `a2a-sdk` client: it
answers as its docstring says, an approval is `input-required` answered once, a waiting task
is cancelled, a failure fails the task."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a.client.errors import A2AClientError
from a2a.types import TaskState
from a2a.utils.errors import A2AError

from tests.network.a2a.servers import (
    answering,
    cancelled_while_running,
    client_for,
    collect,
    final_task,
    output_text,
    said,
    serve,
    waiting_on,
)

pytestmark = pytest.mark.anyio
TARGET = "examples/a2a_test_agent.py:network"


@pytest.fixture(scope="module")
def agent_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("a2a-test-agent") / "threads.db"
    with serve(str(store), None, target=TARGET) as url:
        yield url


def context() -> str:
    return uuid.uuid4().hex


async def test_it_echoes_and_recalls_its_context(agent_url: str) -> None:
    client = await client_for(agent_url, None, streaming=False)
    where = context()
    (first,) = await collect(client, said("hello", where))
    assert first.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_text(first.task) == "echo: hello"
    (second,) = await collect(client, said("recall", where))
    assert output_text(second.task) == "recall: hello | recall"


async def test_an_approval_is_input_required_answered_once(agent_url: str) -> None:
    client = await client_for(agent_url, None, streaming=False)
    (asked,) = await collect(client, said("pay 5", context()))
    assert asked.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert [entry["tool"] for entry in waiting_on(asked.task)] == ["pay"]
    (done,) = await collect(client, answering(asked.task))
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert output_text(done.task) == "done: paid 5"
    with pytest.raises((A2AError, A2AClientError), match="TASK_STATE_COMPLETED"):
        await collect(client, answering(asked.task))  # a second answer: the task is done


async def test_a_waiting_task_is_cancelled_and_explode_fails(agent_url: str) -> None:
    client = await client_for(agent_url, None)
    task = await cancelled_while_running(client, said("wait 30", context()))
    assert task.status.state == TaskState.TASK_STATE_CANCELED
    failed = final_task(await collect(client, said("explode", context())))
    assert failed.status.state == TaskState.TASK_STATE_FAILED


def test_it_runs_offline_as_a_script() -> None:
    from tests.test_examples import run_example

    done = run_example("a2a_test_agent.py", cwd=Path.cwd())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("offline")
