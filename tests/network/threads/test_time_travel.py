"""Checkpoints, state_at, fork and rewind on every store (memory, SQLite file, PostgreSQL).

A network pays through a tool (a side effect counted outside the thread), keeps its payments
in a thread key and its spending in a `user:` key, and its router marks the run done after the
last call. Three runs make three checkpoints.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, StaleThreadError, StateValidationError, ThreadRef
from network.errors import ConfigurationError
from network.history.summary import Summary
from network.threads import (
    CheckpointNotFoundError,
    CheckpointStore,
    Commit,
    DecodedCache,
    MemoryStore,
    SQLStore,
    ThreadExistsError,
    ThreadNotFoundError,
    ThreadStore,
    TimeTravelError,
)
from network.threads.codec import encode_message

pytestmark = pytest.mark.anyio

SCHEMA = {
    "paid": {"type": list[int]},
    "user:spent": {"type": list[int]},
    "done": {"type": bool},
    "note": {"type": str},
}

PAYMENTS: list[int] = []  # the world outside: what the tool really did


@tool
def pay(amount: int, ctx: ToolContext) -> str:
    """Pay `amount`."""
    PAYMENTS.append(amount)
    ctx.kv.set("paid", [amount])
    ctx.kv.set("user:spent", [amount])
    return f"paid {amount}"


def payer(*amounts: int, name: str = "shop") -> Network:
    """One agent call per amount, each paying it; the router marks the run done at its end."""
    model = ScriptedModel([call("pay", amount=amount) for amount in amounts])
    agent = Agent("cashier", tools=[pay], model=model)

    def route(ctx: Any) -> Any:
        if ctx.call_count < len(amounts):
            return agent
        ctx.state.kv.set("done", True)
        return None

    return Network(name, agents=[agent], router=route, state_schema=SCHEMA)


async def three_runs(store: ThreadStore, thread_id: str = "t") -> list[Any]:
    """Three runs of one payment each: 10, 20, 30. Their results."""
    PAYMENTS.clear()
    return [
        await payer(amount).run(
            f"pay {amount}", thread=ThreadRef(thread_id, user_id="u", store=store)
        )
        for amount in (10, 20, 30)
    ]


def as_checkpoints(store: ThreadStore) -> CheckpointStore:
    assert isinstance(store, CheckpointStore)
    return store


async def test_every_committed_call_is_a_checkpoint(store: ThreadStore) -> None:
    runs = await three_runs(store)
    listed = await as_checkpoints(store).checkpoints("t")

    assert listed is not None
    assert [c.index for c in listed] == [0, 1, 2]
    assert [c.agent for c in listed] == ["cashier"] * 3
    assert [c.run_id for c in listed] == [run.run_id for run in runs]
    assert [c.messages for c in listed] == [3, 6, 9]  # user, assistant's call, tool result
    # its commit wrote the call's keys, and the router's write after it belongs to it too
    assert listed[0].wrote == ("done", "paid", "user:spent")
    assert listed[0].at == runs[0].results[0].started_at
    assert listed[0].revision < listed[1].revision < listed[2].revision
    assert await as_checkpoints(store).checkpoints("missing") is None


async def test_state_at_reads_the_state_and_conversation_after_a_checkpoint(
    store: ThreadStore,
) -> None:
    await three_runs(store)
    checkpoints = as_checkpoints(store)

    first = await checkpoints.state_at("t", 0)
    middle = await checkpoints.state_at("t", 1)
    last = await checkpoints.state_at("t", -1)

    assert first is not None and middle is not None and last is not None
    assert first.state == {"paid": [10], "done": True}
    assert middle.state == {"paid": [10, 20], "done": True}
    assert last.state == {"paid": [10, 20, 30], "done": True}
    assert "user:spent" not in middle.state  # shared keys are not part of a checkpoint
    assert [m.content for m in middle.messages if m.role == "user"] == ["pay 10", "pay 20"]
    assert len(middle.messages) == 6
    assert [r.tool_calls[0].arguments for r in middle.results] == [{"amount": 10}, {"amount": 20}]
    assert middle.checkpoint.index == 1 and last.checkpoint.index == 2
    assert await checkpoints.state_at("missing", 0) is None


async def test_a_missing_checkpoint_is_refused_by_name(store: ThreadStore) -> None:
    await three_runs(store)
    checkpoints = as_checkpoints(store)
    for bad in (3, -4, True, "1", 1.0):
        with pytest.raises(CheckpointNotFoundError) as caught:
            await checkpoints.state_at("t", bad)  # type: ignore[arg-type]
        assert caught.value.thread_id == "t"


async def test_a_fork_starts_from_the_checkpoint_and_leaves_the_source_alone(
    store: ThreadStore,
) -> None:
    await three_runs(store)
    before = await store.get_thread("t")
    assert before is not None

    forked = await payer().fork(
        ThreadRef("t", store=store), at=0, update={"note": "what if"}, new_thread_id="f"
    )

    assert forked.thread.thread_id == "f" and forked.thread.user_id == "u"
    assert (forked.origin.parent_thread_id, forked.origin.checkpoint) == ("t", 0)
    assert await as_checkpoints(store).origin("f") == forked.origin
    fork = await store.get_thread("f")
    assert fork is not None
    assert fork.state == {"paid": [10], "done": True, "note": "what if"}
    assert len(fork.results) == 1 and len(fork.messages) == 3
    # shared keys keep their current value, and the report says who wrote them since
    assert fork.user_state == {"user:spent": [10, 20, 30]}
    assert [(w.key, w.checkpoint, w.tool) for w in forked.shared_keys] == [
        ("user:spent", 1, "pay"),
        ("user:spent", 2, "pay"),
    ]
    after = await store.get_thread("t")
    assert after is not None
    assert after.revision == before.revision and len(after.results) == 3
    assert after.state == before.state

    # the next run on the fork continues from the checkpoint, with the conversation
    model = ScriptedModel([call("pay", amount=99)])
    network = payer()
    network.agents["cashier"].model = model
    network.router = lambda ctx: network.agents["cashier"] if ctx.call_count == 0 else None
    result = await network.run("pay 99", thread=ThreadRef("f", user_id="u", store=store))
    assert result["paid"] == [10, 99]
    sent = model.requests[0].messages
    assert [m.content for m in sent if m.role == "user"] == ["pay 10", "pay 99"]
    source = await store.get_thread("t")
    assert source is not None and len(source.results) == 3


async def test_a_fork_of_a_fork_at_an_earlier_checkpoint(store: ThreadStore) -> None:
    await three_runs(store)
    await payer().fork(ThreadRef("t", store=store), at=2, new_thread_id="f1")
    again = await payer().fork(ThreadRef("f1", store=store), at=1, new_thread_id="f2")
    state = await as_checkpoints(store).state_at("f2", -1)
    assert state is not None and state.state["paid"] == [10, 20]
    assert again.origin.parent_thread_id == "f1"
    listed = await as_checkpoints(store).checkpoints("f2")
    assert listed is not None and [c.index for c in listed] == [0, 1]


async def test_a_bad_fork_changes_nothing(store: ThreadStore) -> None:
    await three_runs(store)
    network = payer()
    before = [info.thread_id for info in await store.list_threads()]

    with pytest.raises(StateValidationError) as caught:
        await network.fork(ThreadRef("t", store=store), at=0, update={"paid": "not a list"})
    assert caught.value.key == "paid"
    for shared in ("user:spent", "app:x", "temp:y"):
        with pytest.raises(TimeTravelError, match=shared) as refused:
            await network.fork(ThreadRef("t", store=store), at=0, update={shared: [1]})
        assert refused.value.key == shared  # the error names the key, as a field too
    for hostile in (float("nan"), 10**400):
        with pytest.raises(StateValidationError) as caught:
            await network.fork(ThreadRef("t", store=store), at=0, update={"note": hostile})
        assert caught.value.key == "note"
    with pytest.raises(CheckpointNotFoundError):
        await network.fork(ThreadRef("t", store=store), at=7)
    with pytest.raises(ThreadExistsError):
        await network.fork(ThreadRef("t", store=store), at=0, new_thread_id="t")
    with pytest.raises(ThreadNotFoundError):
        await network.fork(ThreadRef("nope", store=store), at=0)
    with pytest.raises(TimeTravelError, match="belongs to app"):
        await payer(name="other").fork(ThreadRef("t", store=store), at=0)
    with pytest.raises(TimeTravelError, match="belongs to user"):
        await network.fork(ThreadRef("t", user_id="mallory", store=store), at=0)
    for metadata in ({"by": object()}, {"score": float("inf")}, "tag"):  # memory kept these
        with pytest.raises(ConfigurationError, match="metadata"):
            await network.fork(ThreadRef("t", store=store), at=0, metadata=metadata)  # type: ignore[arg-type]

    assert [info.thread_id for info in await store.list_threads()] == before


async def test_rewind_moves_back_in_place_and_keeps_what_it_discarded(store: ThreadStore) -> None:
    runs = await three_runs(store)
    assert PAYMENTS == [10, 20, 30]

    report = await payer().rewind(ThreadRef("t", store=store), to=0)

    assert report.checkpoint == 0 and report.discarded_calls == 2
    calls = runs[1].results[-1].tool_calls + runs[2].results[-1].tool_calls
    assert [(t.tool, t.call_id, t.checkpoint) for t in report.tool_calls_not_undone] == [
        ("pay", calls[0].id, 1),
        ("pay", calls[1].id, 2),
    ]
    assert "not undone" in report.note
    assert [(w.key, w.checkpoint) for w in report.shared_keys] == [
        ("user:spent", 1),
        ("user:spent", 2),
    ]
    assert PAYMENTS == [10, 20, 30]  # nothing ran again, nothing was "refunded"

    thread = await store.get_thread("t")
    assert thread is not None
    assert thread.revision == report.revision
    assert thread.state == {"paid": [10], "done": True}
    assert thread.user_state == {"user:spent": [10, 20, 30]}  # shared: current values kept
    assert len(thread.results) == 1 and len(thread.messages) == 3

    kept = await store.get_thread(report.kept_as)
    assert kept is not None  # the discarded calls stay readable
    assert [r.tool_calls[0].arguments["amount"] for r in kept.results] == [10, 20, 30]
    assert kept.state == {"paid": [10, 20, 30], "done": True}
    origin = await as_checkpoints(store).origin(report.kept_as)
    assert origin is not None and (origin.kind, origin.parent_thread_id) == ("rewind", "t")
    kept_checkpoints = await as_checkpoints(store).checkpoints(report.kept_as)
    assert kept_checkpoints is not None and len(kept_checkpoints) == 3

    # the next run continues from checkpoint 0, and checkpoints go on from there
    model = ScriptedModel([call("pay", amount=5)])
    network = payer(5)
    network.agents["cashier"].model = model
    result = await network.run("pay 5", thread=ThreadRef("t", user_id="u", store=store))
    assert result["paid"] == [10, 5]
    assert [m.content for m in model.requests[0].messages if m.role == "user"] == [
        "pay 10",
        "pay 5",
    ]
    listed = await as_checkpoints(store).checkpoints("t")
    assert listed is not None and [c.index for c in listed] == [0, 1]
    again = await as_checkpoints(store).state_at("t", 1)
    assert again is not None and again.state == {"paid": [10, 5], "done": True}
    first = await as_checkpoints(store).state_at("t", 0)
    assert first is not None and first.state == {"paid": [10], "done": True}


async def test_a_run_that_loaded_before_a_rewind_cannot_commit_over_it(store: ThreadStore) -> None:
    await three_runs(store)
    loaded = await store.get_thread("t")
    assert loaded is not None
    await payer().rewind(ThreadRef("t", store=store), to=1, kept_as="old")
    with pytest.raises(StaleThreadError):
        await store.append_results("t", Commit(revision=loaded.revision, state={"note": '"x"'}))


async def test_a_rewind_can_be_refused_and_then_changes_nothing(store: ThreadStore) -> None:
    await three_runs(store)
    before = await store.get_thread("t")
    assert before is not None
    with pytest.raises(ThreadExistsError):
        await payer().rewind(ThreadRef("t", store=store), to=0, kept_as="t")
    with pytest.raises(CheckpointNotFoundError):
        await payer().rewind(ThreadRef("t", store=store), to=3)
    after = await store.get_thread("t")
    assert after is not None
    assert (after.revision, len(after.results), after.state) == (
        before.revision,
        len(before.results),
        before.state,
    )


async def test_fork_and_rewind_take_the_thread_as_run_does_without_a_warning(
    store: ThreadStore,
) -> None:
    await three_runs(store)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling warns about nothing
        forked = await payer().fork(
            ThreadRef("t", user_id="u", store=store), at=0, new_thread_id="f"
        )
        report = await payer().rewind(ThreadRef("t", user_id="u", store=store), to=1)
        # the app is the network's unless the ThreadRef names it, as for a run
        again = await payer(name="other").fork(
            ThreadRef("t", app_name="shop", store=store), at=1, new_thread_id="g"
        )
    assert (forked.origin.parent_thread_id, forked.origin.checkpoint) == ("t", 0)
    assert report.checkpoint == 1 and report.discarded_calls == 1
    assert again.thread.app_name == "shop"
    with pytest.raises(TimeTravelError, match="belongs to app 'shop', not 'elsewhere'"):
        await payer().fork(ThreadRef("t", app_name="elsewhere", store=store), at=0)
    with pytest.raises(TimeTravelError, match="belongs to user"):
        await payer().rewind(ThreadRef("t", user_id="mallory", store=store), to=0)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'thread'"):
        await payer().fork(at=0)  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match=r"fork\(\) needs the thread"):
        await payer().fork(None, at=0)  # type: ignore[arg-type]


async def test_the_old_keywords_of_fork_and_rewind_are_gone_and_change_nothing(
    store: ThreadStore,
) -> None:
    await three_runs(store)
    network = payer()
    before = await store.get_thread("t")
    for keywords in ({"user_id": "u", "store": store}, {"thread_id": "t"}, {"store": store}):
        name = next(iter(keywords))
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
            await network.fork("t", at=0, new_thread_id="f", **keywords)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
            await network.rewind("t", to=0, **keywords)  # type: ignore[arg-type]
    assert await store.get_thread("f") is None  # no fork was made
    after = await store.get_thread("t")
    assert before is not None and after is not None and len(after.results) == len(before.results)


async def test_a_store_without_checkpoints_is_refused_by_name() -> None:
    class Plain(MemoryStore):
        checkpoints = None  # type: ignore[assignment]

    with pytest.raises(TimeTravelError, match="Plain keeps no checkpoints"):
        await payer().fork(ThreadRef("t", store=Plain()), at=0)


async def test_another_process_never_reads_a_rewound_thread_from_its_cache(
    store_kind: str, store_url: str | None, tmp_path: Path, open_store: Callable[[], Any]
) -> None:
    """Two stores with caches of their own stand for two processes on one database."""
    if store_url is None:
        pytest.skip("a memory store is one process's")
    first = open_store()  # empties PostgreSQL's tables
    reader = SQLStore(store_url, cache=DecodedCache())
    writer = SQLStore(store_url, cache=DecodedCache())
    try:
        await three_runs(writer)
        seen = await reader.get_thread("t")  # the reader caches 3 calls
        assert seen is not None and len(seen.results) == 3
        await payer().rewind(ThreadRef("t", store=writer), to=0)
        for amount in (1, 2, 3):  # longer again than what the reader cached
            await payer(amount).run("again", thread=ThreadRef("t", user_id="u", store=writer))
        now = await reader.get_thread("t")
        assert now is not None
        amounts = [r.tool_calls[0].arguments["amount"] for r in now.results]
        assert amounts == [10, 1, 2, 3]
        assert now.state["paid"] == [10, 1, 2, 3]
    finally:
        await reader.close()
        await writer.close()
        await first.close()


class _RecordedSteps:
    """The durable engine's step recording, reduced to what a thread load uses."""

    def __init__(self) -> None:
        self.recorded: dict[str, Any] = {}

    async def step(self, name: str, run: Callable[[], Any]) -> Any:
        if name not in self.recorded:
            self.recorded[name] = await run()
        return self.recorded[name]


async def test_a_durable_run_cannot_resume_on_a_thread_rewound_behind_its_load(
    store: ThreadStore,
) -> None:
    from network import ThreadError
    from network.threads.session import ThreadSession

    await three_runs(store)
    steps = _RecordedSteps()
    network = payer()
    await ThreadSession.open(network, ThreadRef("t", store=store), steps=steps)  # type: ignore[arg-type]
    await network.rewind(ThreadRef("t", store=store), to=0)
    with pytest.raises(ThreadError, match="'t' was rewound after this durable run loaded it"):
        await ThreadSession.open(network, ThreadRef("t", store=store), steps=steps)  # type: ignore[arg-type]


def same_checkpoint_state(got: Any, want: Any) -> None:
    """Two `state_at` answers hold the same checkpoint, state, conversation, calls, summaries."""
    assert got.thread_id == want.thread_id
    assert got.checkpoint == want.checkpoint
    assert got.state == want.state
    assert [encode_message(m) for m in got.messages] == [encode_message(m) for m in want.messages]
    assert [r.to_json() for r in got.results] == [r.to_json() for r in want.results]
    assert [len(r.history) for r in got.results] == [len(r.history) for r in want.results]
    assert [s.to_json() for s in got.summaries] == [s.to_json() for s in want.summaries]


@pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])
async def test_a_first_state_at_in_a_process_reads_only_the_checkpoints_rows(
    store_kind: str, store_url: str, open_store: Callable[[], Any]
) -> None:
    """A store with an empty cache (a new process) fetches the thread up to the checkpoint,
    not the whole thread; what it returns is what a store holding the whole thread returns,
    on a thread with a fork, a rewind, a summary and `user:` keys; and its cache, holding that
    prefix, still gives the whole thread to the next read."""
    store = open_store()
    await three_runs(store)  # "t": 10, 20, 30, each writing `paid` and `user:spent`
    network = payer()
    await network.fork(
        ThreadRef("t", store=store), at=1, update={"note": "what if"}, new_thread_id="f"
    )
    fork = await store.get_thread("f")
    assert fork is not None
    summary = Summary(text="paid 10 and 20", covers=6, by="test")
    await store.append_results("f", Commit(revision=fork.revision, summaries=[summary]))
    await payer(40).run("pay 40", thread=ThreadRef("f", user_id="u", store=store))
    report = await network.rewind(ThreadRef("t", store=store), to=0)
    await payer(5, 6).run("pay", thread=ThreadRef("t", user_id="u", store=store))

    for thread_id in ("t", "f", report.kept_as):
        async with SQLStore(store_url, cache=DecodedCache()) as full:
            whole = await full.get_thread(thread_id)  # the whole thread in its cache
            assert whole is not None
            listed = await full.checkpoints(thread_id)
            assert listed is not None and len(listed) >= 3
            for checkpoint in listed:
                async with SQLStore(store_url, cache=DecodedCache()) as cold:
                    got = await cold.state_at(thread_id, checkpoint.index)
                    want = await full.state_at(thread_id, checkpoint.index)
                    assert got is not None and want is not None
                    same_checkpoint_state(got, want)
                    assert "user:spent" not in got.state
                    entry = cold.decoded.entry(thread_id)
                    assert entry is not None  # it holds the checkpoint's rows, no more
                    assert len(entry.messages) == checkpoint.messages == len(got.messages)
                    assert len(entry.results) == checkpoint.index + 1 == len(got.results)
                    # the next read of the thread fetches the rest
                    again = await cold.get_thread(thread_id)
                    assert again is not None
                    assert [encode_message(m) for m in again.messages] == [
                        encode_message(m) for m in whole.messages
                    ]
                    assert [r.to_json() for r in again.results] == [
                        r.to_json() for r in whole.results
                    ]
                    assert [s.text for s in again.summaries] == [s.text for s in whole.summaries]
    fork_summaries = (await store.get_thread("f")).summaries  # type: ignore[union-attr]
    assert [s.text for s in fork_summaries] == ["paid 10 and 20"]


async def test_a_forks_update_sets_each_value_without_the_keys_handler(store: ThreadStore) -> None:
    """LangGraph's update_state runs the key's reducer; a fork's `update` sets the value as
    given, as docs/coming-from-langgraph.md says: `paid` (a list key, merge_lists) is [99],
    not [10, 99]."""
    await three_runs(store)
    await payer().fork(ThreadRef("t", store=store), at=0, update={"paid": [99]}, new_thread_id="f")
    fork = await store.get_thread("f")
    assert fork is not None and fork.state["paid"] == [99]
