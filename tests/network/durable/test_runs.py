"""What a durable run is given: its id, its state, its tools' results, and waiting for it by id.
Each is kept as a plain run keeps it, or refused with a typed error naming what is wrong."""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import Agent, ScriptedModel, tool
from agents.models.scripted import call
from network import Network, durable
from network.errors import (
    ConfigurationError,
    InvalidIdError,
    MessageError,
    StateError,
    StateValidationError,
)

writer = Network(
    "writer", agents=[Agent("writer", description="writes", model=ScriptedModel(["written"] * 50))]
)
reader = Network(
    "reader", agents=[Agent("reader", description="reads", model=ScriptedModel(["read"] * 50))]
)
typed = Network(
    "typed",
    agents=[Agent("typed", description="keeps", model=ScriptedModel(["kept"] * 50))],
    state_schema={"blob": {"type": bytes}, "ratio": {"type": float}},
)


@tool
def open_lock() -> Any:
    """Return a live lock (which no record can hold)."""
    return threading.Lock()


locker = Network(
    "locker",
    agents=[
        Agent(
            "locker",
            description="locks",
            tools=[open_lock],
            model=ScriptedModel([call("open_lock"), "x"]),
        )
    ],
)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([writer, reader, typed, locker], db=url)
    try:
        yield url
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_run_id_of_another_network_is_refused(db: str) -> None:
    await writer.run("go", durable=True, run_id="shared-id")
    with pytest.raises(durable.RunIdInUseError, match="network 'writer'") as caught:
        await reader.run("go", durable=True, run_id="shared-id")
    assert caught.value.network == "writer"
    again = await writer.run("go", durable=True, run_id="shared-id")  # its own: its outcome
    assert again.output == "written"
    client = durable.DurableClient(db)
    try:
        with pytest.raises(durable.RunIdInUseError):
            client.enqueue("reader", "go", run_id="shared-id")
    finally:
        client.close()


@pytest.mark.anyio
async def test_an_empty_run_id_is_refused_not_replaced(db: str) -> None:
    with pytest.raises(InvalidIdError, match="run_id must not be empty"):
        await writer.run("go", durable=True, run_id="")
    client = durable.DurableClient(db)
    try:
        with pytest.raises(InvalidIdError, match="run_id must not be empty"):
            client.enqueue("writer", "go", run_id="")
    finally:
        client.close()


@pytest.mark.anyio
async def test_another_network_of_a_launched_name_is_refused_not_run_as_that_one(
    db: str,
) -> None:
    """The workflow runs a network by name: a second network named "writer" ran the
    launched one's agents, silently (its output "written", not its own)."""
    other = Network(
        "writer", agents=[Agent("w2", description="other", model=ScriptedModel(["other"] * 5))]
    )
    with pytest.raises(durable.DurableConfigError, match="another network named 'writer'"):
        await other.run("go", durable=True, run_id="other-writer")
    fresh = Network(
        "fresh", agents=[Agent("f", description="new", model=ScriptedModel(["new"] * 5))]
    )
    with pytest.raises(durable.DurableConfigError, match="another network named 'writer'"):
        durable.launch([fresh, other], db=db)
    launched = durable.launched()
    assert launched is not None and launched.networks["writer"] is writer  # as it was
    assert "fresh" not in launched.networks  # the refused launch added nothing
    client = durable.DurableClient(db)
    try:
        with pytest.raises(durable.UnknownRunError):
            client.status("other-writer")  # nothing was recorded
    finally:
        client.close()
    assert (await writer.run("go", durable=True)).output == "written"


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"check_every": math.nan}, "check_every must be a finite number > 0"),
        ({"check_every": -1}, "check_every must be a finite number > 0"),
        ({"executor_id": "a b"}, "executor_id must be 1 to 100 letters"),
        ({"worker_concurrency": 0}, "worker_concurrency must be an int >= 1"),
        ({"executor_id": "another-process"}, "already launched in this process as executor"),
    ],
)
def test_a_second_launch_checks_its_options_as_the_first_does(
    db: str, options: dict[str, Any], words: str
) -> None:
    """A second launch returned the launched engine whatever its options said."""
    with pytest.raises(durable.DurableConfigError, match=re.escape(words)):
        durable.launch([writer], db=db, **options)


@pytest.mark.parametrize("networks", [writer, None, 5])
def test_launch_takes_a_list_of_networks(tmp_path: Path, networks: Any) -> None:
    # a network alone, or None, was a TypeError ("'Network' object is not iterable")
    with pytest.raises(durable.DurableConfigError, match="networks must be a list of networks"):
        durable.launch(networks, db=f"sqlite:///{tmp_path / 'never.sqlite'}")
    assert not (tmp_path / "never.sqlite").exists()


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("night\x00shift", "its name holds a control character (U+0000)"),
        ("night\nshift", "its name holds a control character (U+000A)"),
        ("night\ud800", "its name holds a lone surrogate (U+D800)"),
        ("n" * 257, "its name is 257 characters long, over the limit of 256"),
    ],
)
def test_a_network_whose_name_enqueue_refuses_is_refused_at_launch(
    tmp_path: Path, name: str, words: str
) -> None:
    # it launched (a worker served its queue) and ran in process, but `enqueue` refuses the
    # name: a worker of it never got a run
    network = Network(name, agents=[Agent("a", model=ScriptedModel(["done"]))])
    with pytest.raises(durable.DurableConfigError, match=re.escape(words)) as refused:
        durable.launch([network], db=f"sqlite:///{tmp_path / 'never.sqlite'}", worker=True)
    assert "cannot run durably" in str(refused.value)
    assert not (tmp_path / "never.sqlite").exists()


def same(one: Any, two: Any) -> bool:
    if isinstance(one, float) and math.isnan(one):
        return isinstance(two, float) and math.isnan(two)
    return type(one) is type(two) and one == two


async def outcome(network: Network, state: dict[str, Any], **options: Any) -> Any:
    """The run's final state values, or its error as (type, message)."""
    try:
        kv = (await network.run("go", state=state, **options)).state.kv
        return {key: kv.get(key) for key in state}
    except Exception as exc:
        return (type(exc), str(exc))


UNTYPED = {
    "when": datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
    "tags": {"a", "b"},
    "raw": b"\x00\xff",
    "nan": math.nan,
    "inf": math.inf,
    "object": object(),
    "lock": threading.Lock(),
    "text": "plain",
}
TYPED = {
    "blob": b"\x01\x02",
}


@pytest.mark.anyio
@pytest.mark.parametrize("key", list(UNTYPED))
async def test_untyped_state_is_refused_or_kept_as_a_plain_run_does(db: str, key: str) -> None:
    state = {key: UNTYPED[key]}
    plain = await outcome(writer, state)
    kept = await outcome(writer, state, durable=True)
    if isinstance(plain, tuple):  # refused: the same error, naming the key
        assert kept == plain and repr(key) in plain[1]
    else:
        assert same(kept[key], plain[key]) and same(plain[key], UNTYPED[key])


@pytest.mark.anyio
@pytest.mark.parametrize("key", list(TYPED))
async def test_a_typed_key_keeps_its_value_as_a_plain_run_does(db: str, key: str) -> None:
    plain = await outcome(typed, {key: TYPED[key]})
    kept = await outcome(typed, {key: TYPED[key]}, durable=True)
    assert not isinstance(plain, tuple), plain
    assert same(kept[key], plain[key]) and same(plain[key], TYPED[key])


@pytest.mark.anyio
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
async def test_a_typed_key_refuses_what_json_cannot_carry_as_a_plain_run_does(
    db: str, value: float
) -> None:
    plain = await outcome(typed, {"ratio": value})
    kept = await outcome(typed, {"ratio": value}, durable=True)
    assert isinstance(plain, tuple) and "'ratio'" in plain[1]
    assert kept == plain


@pytest.mark.anyio
@pytest.mark.parametrize("value", [math.nan, math.inf, 0, -1, 2.5, "3", True])
async def test_max_iter_is_refused_as_a_plain_run_refuses_it_before_anything_is_recorded(
    db: str, value: Any
) -> None:
    """A durable run's max_iter went through its request's pydantic model: NaN, 0 or 2.5 were
    a pydantic ValidationError, and "3" or True were taken (as 3 and 1) where a plain run
    refuses them."""
    with pytest.raises(ConfigurationError) as plain:
        await writer.run("go", max_iter=value)
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    with pytest.raises(ConfigurationError) as durably:
        await writer.run("go", durable=True, run_id=run_id, max_iter=value)
    assert str(durably.value) == str(plain.value) and "max_iter" in str(plain.value)
    client = durable.DurableClient(db)
    try:
        with pytest.raises(durable.UnknownRunError):
            client.status(run_id)
    finally:
        client.close()


@pytest.mark.anyio
async def test_a_state_value_that_cannot_be_recorded_is_refused_naming_its_key(db: str) -> None:
    @dataclasses.dataclass
    class Point:  # a local class: a plain run keeps it, pickle cannot record it
        x: int

    network = Network(
        "points",
        agents=[Agent("p", description="keeps", model=ScriptedModel(["ok"] * 5))],
        state_schema={"at": {"type": Point}},
    )
    durable.launch([network], db=db)
    state = {"at": Point(1)}
    assert (await network.run("go", state=state)).state.kv.get("at") == Point(1)
    with pytest.raises(durable.DurableConfigError, match="state key 'at' cannot be recorded"):
        await network.run("go", state=state, durable=True)


@pytest.mark.anyio
async def test_a_tool_result_that_cannot_be_recorded_names_the_tool_and_the_run(
    db: str,
) -> None:
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    with pytest.raises(durable.UnrecordableStepError) as caught:
        await locker.run("go", durable=True, run_id=run_id)
    message = str(caught.value)
    assert "tool 'open_lock'" in message and run_id in message
    assert caught.value.run_id == run_id


class HoldsALock(Exception):
    """A model's error that pickle cannot record (it holds a live lock)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class TwoParts(Exception):
    """A router's error that pickle records but cannot rebuild (its class takes two args)."""

    def __init__(self, part: str, other: str) -> None:
        super().__init__(f"{part}/{other}")


def failing_model(request: Any) -> Any:
    raise HoldsALock("the provider's socket broke")


def failing_router(ctx: Any) -> Any:
    raise TwoParts("no", "route")


@pytest.mark.anyio
async def test_a_model_or_router_error_pickle_cannot_record_reaches_the_caller_as_it_was(
    db: str,
) -> None:
    """A step's error is recorded before it is raised: one pickle could not record failed
    the run with pickle's TypeError instead of the model's error; one it could not rebuild
    was recorded as it was, which a replay (or DBOS listing the steps) could not read back.
    Now the caller gets the error itself, and the record holds its type and message."""
    agent = Agent("fails", description="fails", model=ScriptedModel(failing_model))
    broken = Network("broken-model", agents=[agent])
    lost = Network("lost-router", agents=[agent], router=failing_router)
    durable.launch([broken, lost], db=db)
    with pytest.raises(HoldsALock, match="socket broke"):
        await broken.run("go", durable=True, run_id="broken-1")
    with pytest.raises(TwoParts, match="no/route"):
        await lost.run("go", durable=True, run_id="lost-1")
    client = durable.DurableClient(db)
    try:
        assert client.status("broken-1").error == "HoldsALock: the provider's socket broke"
        steps = {
            step["function_name"]: step["error"]
            for step in client._client.list_workflow_steps("lost-1")
        }
    finally:
        client.close()
    assert isinstance(steps["router"], durable.RecordedStepError)
    assert str(steps["router"]) == "TwoParts: no/route"
    assert steps["router"].error_type == "TwoParts"


@pytest.mark.anyio
async def test_waiting_for_a_run_by_id_has_one_error_for_an_unknown_id(db: str) -> None:
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    await writer.run("go", durable=True, run_id=run_id)
    client = durable.DurableClient(db)
    try:
        done = client.result(run_id)
        assert (done.status, done.output, done.network) == ("SUCCESS", "written", "writer")
        for wait in (client.status, client.result):
            with pytest.raises(durable.UnknownRunError, match="no durable run 'nope'"):
                wait("nope")
        with pytest.raises(KeyError):  # a lookup by id that found nothing
            client.result("nope")
        # the events of no run: the same error (it was DBOS's DBOSNonExistentWorkflowError)
        with pytest.raises(durable.UnknownRunError, match="no durable run 'nope'"):
            next(client.events("nope"))
    finally:
        client.close()


def test_an_id_no_run_may_have_is_refused_by_every_lookup(db: str) -> None:
    client = durable.DurableClient(db)
    try:
        lookups = (client.status, client.result, lambda run_id: next(client.events(run_id)))
        for lookup in lookups:
            # a lone surrogate failed in the driver with a UnicodeEncodeError
            with pytest.raises(InvalidIdError, match="run_id holds a lone surrogate"):
                lookup("run_\ud800")
            with pytest.raises(InvalidIdError, match="run_id is 100000 characters long"):
                lookup("x" * 100_000)  # named by its length, not echoed whole
        # the run's input, as `network.run` checks it (a worker would fail the run on it)
        with pytest.raises(MessageError, match="lone surrogate"):
            client.enqueue("writer", "hi \ud800")
    finally:
        client.close()


@pytest.mark.parametrize(
    ("options", "error", "field", "words"),
    [
        (
            {"input": b"go"},
            MessageError,
            "input",
            "must be the user's message (a string), got bytes",
        ),
        ({"input": None}, MessageError, "input", "got NoneType"),
        ({"input": {"text": "go"}}, MessageError, "input", "got dict"),
        ({"max_iter": 0}, ConfigurationError, None, "max_iter must be an int >= 1, got 0"),
        ({"max_iter": True}, ConfigurationError, None, "max_iter must be an int >= 1, got True"),
        ({"max_iter": math.nan}, ConfigurationError, None, "max_iter must be an int >= 1"),
        ({"thread_id": "t\x01"}, InvalidIdError, "thread_id", "a control character"),
        ({"thread_id": "t", "user_id": "\udc00"}, InvalidIdError, "user_id", "lone surrogate"),
        ({"thread_id": "t", "app_name": "a\x00"}, InvalidIdError, "app_name", "control"),
        ({"app_name": "shop"}, ConfigurationError, None, "app_name= applies only to a run with"),
        # a store no thread store takes: the worker's SQLStore refused it, after the enqueue
        ({"thread_id": "t", "store": "mysql://x"}, ConfigurationError, None, "got 'mysql://x'"),
        (
            {"thread_id": "t", "store": "mysql://app:hunter2@db/app"},
            ConfigurationError,
            None,
            "got 'mysql://app:***@db/app'",
        ),
        ({"thread_id": "t", "store": "sqlite://"}, ConfigurationError, None, "in-memory SQLite"),
        ({"state": {1: "one"}}, StateError, "1", "state keys must be non-empty strings, got 1"),
        ({"state": {"": 1}}, StateError, "", "non-empty strings"),
        ({"state": {"k\ud800": 1}}, StateError, "k\ud800", "lone surrogate"),
        ({"state": {"k\x00": 1}}, StateError, "k\x00", "NUL"),
    ],
)
def test_enqueue_refuses_what_no_network_could_run_before_writing(
    tmp_path: Path, options: dict[str, Any], error: type[Exception], field: Any, words: str
) -> None:
    # Each was written to the queue and failed by the worker (or, for bytes, `max_iter=True`
    # and `app_name=` without a thread, run as something else than what was asked).
    client = durable.DurableClient(f"sqlite:///{tmp_path / 'dbos.sqlite'}")
    try:
        arguments = {"input": "go", **options}
        with pytest.raises(error, match=re.escape(words)) as caught:
            client.enqueue("writer", arguments.pop("input"), run_id="refused", **arguments)
        if field is not None:  # InvalidIdError and MessageError say `field`, StateError `key`
            named = getattr(caught.value, "field", getattr(caught.value, "key", None))
            assert named == field
        with pytest.raises(durable.UnknownRunError):
            client.status("refused")  # nothing was written
    finally:
        client.close()


def test_network_enqueue_checks_the_state_against_its_schema_before_writing(
    tmp_path: Path,
) -> None:
    # The value was queued and the worker failed the run on it, after the enqueue had returned.
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    with pytest.raises(StateValidationError, match="ratio") as caught:
        typed.enqueue("go", db=db, state={"ratio": "not a number"}, run_id="refused")
    assert caught.value.key == "ratio"
    client = durable.DurableClient(db)
    try:
        with pytest.raises(durable.UnknownRunError):
            client.status("refused")  # nothing was written
        run_id = typed.enqueue("go", db=db, state={"ratio": 0.5, "blob": b"\x00"})
        assert client.status(run_id).status == "ENQUEUED"
    finally:
        client.close()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"input": None}, MessageError),
        ({"run_id": ""}, InvalidIdError),
        ({"max_iter": 0}, ConfigurationError),
        ({"thread": "t\x00"}, InvalidIdError),
    ],
)
def test_network_enqueue_refuses_before_it_creates_the_database(
    tmp_path: Path, options: dict[str, Any], error: type[Exception]
) -> None:
    # each was refused by the client, after it had created (and migrated) the database
    arguments = {"input": "go", **options}
    with pytest.raises(error):
        writer.enqueue(
            arguments.pop("input"), db=f"sqlite:///{tmp_path / 'never.sqlite'}", **arguments
        )
    assert not (tmp_path / "never.sqlite").exists()


def test_a_run_of_a_network_no_worker_serves_waits_for_one(
    tmp_path: Path, quiet_logs: None
) -> None:
    # The client cannot tell which networks workers serve: a worker of another network
    # leaves the run queued (it failed it before networks had queues of their own), and the
    # run goes once a worker serves its network.
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([writer], db=db, worker=True)
    client = durable.DurableClient(db)
    try:
        ghost = client.enqueue("reader", "go")
        assert client.result(client.enqueue("writer", "go"), timeout=60).status == "SUCCESS"
        waiting = client.status(ghost)
        assert (waiting.status, waiting.network, waiting.error) == ("ENQUEUED", "reader", None)
        durable.launch([reader], db=db, worker=True)  # now this worker serves it too
        assert client.result(ghost, timeout=60).status == "SUCCESS"
    finally:
        client.close()
        durable.shutdown()


@pytest.mark.anyio
async def test_a_first_durable_run_launches_from_inside_its_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the default database is a file in the working directory
    try:
        result = await writer.run("go", durable=True)
        assert result.output == "written"
        assert (tmp_path / "agent-network-durable.sqlite").exists()
    finally:
        durable.shutdown()


stalled: list[str] = []  # the calls of `stall`: the first waits until cancelled


@tool
async def stall(text: str) -> str:
    """Wait (the first call, until its run's caller is cancelled), then note `text`."""
    stalled.append(text)
    if len(stalled) == 1:
        await anyio.sleep_forever()
    return "noted"


def stall_or_answer(request: Any) -> Any:
    """The staller's model, one answer per request whatever ran before (tests share it)."""
    return "stalled once" if request.history[-1].role == "tool" else call("stall", text="x")


staller = Network(
    "staller",
    agents=[
        Agent(
            "staller",
            description="stalls",
            tools=[stall],
            model=ScriptedModel(stall_or_answer),
        )
    ],
    router=lambda ctx: "staller" if ctx.last_result is None or ctx.last_result.tool_calls else None,
)


@pytest.mark.anyio
async def test_a_run_whose_caller_is_cancelled_goes_on_from_its_last_step(db: str) -> None:
    """The cancelled execution left the run PENDING under this live process, which no process
    takes over: `DurableClient.result` and a call with its id waited until the process died."""
    durable.launch([staller], db=db)
    stalled.clear()
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: staller.run("go", durable=True, run_id=run_id))
        while not stalled:  # the tool is in flight: its model step was recorded
            await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    with anyio.fail_after(10):
        again = await staller.run("go", durable=True, run_id=run_id)
    assert again.output == "stalled once"
    assert stalled == ["x", "x"]  # the call in flight ran again (at least once), no more
    client = durable.DurableClient(db)
    try:
        steps = [s["function_name"] for s in client._client.list_workflow_steps(run_id)]
        assert steps.count("model:staller") == 2 and steps.count("tool:stall") == 1
        assert client.result(run_id, timeout=10).status == "SUCCESS"
    finally:
        client.close()


@pytest.mark.anyio
async def test_a_hand_back_that_fails_leaves_the_cancellation_as_it_was(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller was cancelled: a database error while handing its run back must not
    replace the cancellation (its task group would raise the database's error instead)."""

    def unreachable(run_id: str) -> None:
        raise OSError("the database went away")

    monkeypatch.setattr("network.durable.runs.hand_back", unreachable)
    durable.launch([staller], db=db)
    stalled.clear()
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: staller.run("go", durable=True))
        while not stalled:
            await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    assert group.cancel_scope.cancelled_caught


released = threading.Event()  # set by the test: `hold` returns


@tool
async def hold() -> str:
    """Wait until the test releases the call."""
    while not released.is_set():
        await anyio.sleep(0.01)
    return "held"


holder = Network(
    "holder",
    agents=[
        Agent("holder", description="holds", tools=[hold], model=ScriptedModel([call("hold"), "x"]))
    ],
    router=lambda ctx: "holder" if ctx.last_result is None or ctx.last_result.tool_calls else None,
)


@pytest.mark.anyio
async def test_a_cancelled_run_is_a_run_cancelled_error_to_its_caller_and_for_its_id(
    db: str,
) -> None:
    """Both were DBOS's own DBOSAwaitedWorkflowCancelledError (from a private module)."""
    durable.launch([holder], db=db)
    released.clear()
    client = durable.DurableClient(db)
    try:
        queued = client.enqueue("writer", "go")  # no worker here: it waits, and is cancelled
        assert client.cancel(queued).status == "CANCELLED"
        with pytest.raises(durable.RunCancelledError, match=re.escape(repr(queued))) as caught:
            await writer.run("go", durable=True, run_id=queued)
        assert caught.value.run_id == queued

        run_id = f"run_{uuid.uuid4().hex[:8]}"
        raised: list[BaseException] = []

        async def run() -> None:
            try:
                await holder.run("go", durable=True, run_id=run_id)
            except Exception as exc:
                raised.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            while not _known(client, run_id):  # running (its tool holds)
                await anyio.sleep(0.01)
            await anyio.to_thread.run_sync(client.cancel, run_id)
            released.set()  # the run stops at its next step
        assert [type(exc) for exc in raised] == [durable.RunCancelledError]
    finally:
        released.set()
        client.close()


def _known(client: durable.DurableClient, run_id: str) -> bool:
    try:
        client.status(run_id)
    except durable.UnknownRunError:
        return False
    return True


@pytest.mark.parametrize("where", ["missing-file", "missing-folder", "empty-file", "postgres"])
def test_a_client_without_migrate_on_a_missing_database_names_it(
    request: pytest.FixtureRequest, tmp_path: Path, where: str
) -> None:
    # was a raw sqlalchemy OperationalError ("unable to open database file"), or a client
    # that made an empty SQLite file and failed each call with "no such table"
    path = tmp_path / ("absent" if where == "missing-folder" else "") / "runs.sqlite"
    if where == "empty-file":
        path.touch()
    db = f"sqlite:///{path}"
    if where == "postgres":
        server = request.getfixturevalue("postgres_url")
        user, _, host = server.split("://", 1)[1].rsplit("/", 1)[0].rpartition("@")
        user = user.partition(":")[0]  # a password it has is replaced (the server trusts)
        db = f"postgresql://{user}:hunter2@{host}/never_{uuid.uuid4().hex[:8]}"
    with pytest.raises(durable.DurableConfigError, match="durable runs database") as refused:
        durable.DurableClient(db, migrate=False)
    text = str(refused.value)
    assert ("runs.sqlite" in text) if where != "postgres" else ("never_" in text)
    assert "hunter2" not in text
    assert "migrate=False" in text
    assert path.exists() == (where == "empty-file")  # no file made
