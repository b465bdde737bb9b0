"""Networks running on threads, against every store: loading, committing, scopes, temp: keys."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import ConfigurationError, ModelError, Network, ThreadError, ThreadRef
from network.threads import Commit, MemoryStore, ThreadStore
from tests.network.threads.conftest import everything_stored

pytestmark = pytest.mark.anyio


class Profile(BaseModel):
    name: str
    visits: int = 0


SCHEMA = {
    "notes": {"type": list[str]},
    "profile": {"type": Profile},
    "user:log": {"type": list[str]},
}


@tool
def note(text: str, ctx: ToolContext) -> str:
    """Write a note to every scope, and a secret to temp:."""
    ctx.kv.set("notes", [text])
    ctx.kv.set("user:log", [text])
    ctx.kv.set("app:last", text)
    ctx.kv.set("temp:secret", f"hush-{text}")
    return "noted"


@tool
def read_secret(ctx: ToolContext) -> str:
    """Check the temp: key another agent's tool wrote in this run."""
    ctx.kv.set("saw_secret", ctx.kv.get("temp:secret") is not None)
    return "checked"


def two_agents(*texts: str) -> Network:
    """A writer that notes each text (one call per text), then a checker, once each."""
    writer = Agent(
        "writer",
        system="notes so far: {notes?}",
        tools=[note],
        model=ScriptedModel([call("note", text=t) for t in texts]),
    )
    checker = Agent("checker", tools=[read_secret], model=ScriptedModel([call("read_secret")]))
    plan = [writer] * len(texts) + [checker]

    def route(ctx: Any) -> Any:
        return plan[ctx.call_count] if ctx.call_count < len(plan) else None

    return Network("notes", agents=[writer, checker], router=route, state_schema=SCHEMA)


def dumps(results: list[Any]) -> list[Any]:
    return [r.to_dict(mode="json") for r in results]


async def test_a_thread_carries_history_and_state_from_run_to_run(store: ThreadStore) -> None:
    first = await two_agents("a", "b").run(
        "first", thread=ThreadRef("t1", user_id="u", store=store)
    )
    second = await two_agents("c").run("second", thread=ThreadRef("t1", user_id="u", store=store))

    assert second["notes"] == ["a", "b", "c"]
    assert second["user:log"] == ["a", "b", "c"]
    assert len(second.results) == 5  # the thread's calls: three of the first run, two now
    assert dumps(second.results[:3]) == dumps(first.results)
    # The writer's next call was sent the whole thread's conversation.
    requests = second.results[3].history
    assert [m.content for m in requests if m.role == "user"] == ["first", "second"]


async def test_stored_history_and_state_equal_what_the_run_held(store: ThreadStore) -> None:
    result = await two_agents("a", "b").run("go", thread=ThreadRef("t1", user_id="u", store=store))
    thread = await store.get_thread("t1")

    assert thread is not None
    assert [m.to_dict() for m in thread.messages] == [m.to_dict() for m in result.messages]
    assert dumps(thread.results) == dumps(result.results)
    assert thread.full_state() == result.state.snapshot()
    assert thread.revision == 3  # one commit per agent call


async def test_typed_values_come_back_typed(store: ThreadStore) -> None:
    @tool
    def visit(ctx: ToolContext) -> str:
        """Count a visit."""
        profile = ctx.kv.get("profile") or Profile(name="ann")
        ctx.kv.set("profile", Profile(name=profile.name, visits=profile.visits + 1))
        return "ok"

    def network() -> Network:
        agent = Agent("a", tools=[visit], model=ScriptedModel([call("visit")]))
        return Network("notes", agents=[agent], state_schema=SCHEMA)

    await network().run("one", thread=ThreadRef("t1", store=store))
    again = await network().run("two", thread=ThreadRef("t1", store=store))
    assert again["profile"] == Profile(name="ann", visits=2)


async def test_each_agent_call_is_committed_with_its_delta(store: ThreadStore) -> None:
    commits: list[Commit] = []

    class Recording:
        """A user's own store: the protocol's methods, delegating to another store."""

        async def create_thread(self, thread_id: str, **kwargs: Any) -> Any:
            return await store.create_thread(thread_id, **kwargs)

        async def get_thread(self, thread_id: str) -> Any:
            return await store.get_thread(thread_id)

        async def list_threads(self, **kwargs: Any) -> Any:
            return await store.list_threads(**kwargs)

        async def delete_thread(self, thread_id: str) -> bool:
            return await store.delete_thread(thread_id)

        async def get_results(self, thread_id: str, **kwargs: Any) -> Any:
            return await store.get_results(thread_id, **kwargs)

        async def append_user_message(self, thread_id: str, content: Any, **kw: Any) -> int:
            return await store.append_user_message(thread_id, content, **kw)

        async def append_results(self, thread_id: str, commit: Commit) -> int:
            commits.append(commit)
            return await store.append_results(thread_id, commit)

        async def close(self) -> None:
            pass

    recording = Recording()
    assert isinstance(recording, ThreadStore)
    result = await two_agents("a", "b").run("go", thread=ThreadRef("t1", store=recording))

    assert [len(c.results) for c in commits] == [1, 1, 1]
    assert [c.revision for c in commits] == [0, 1, 2]
    assert commits[0].messages[0].content == "go"  # the user's message rides with call 1
    assert [c.results[0].result.state_delta for c in commits] == [
        r.state_delta for r in result.results
    ]
    assert commits[0].state == {"notes": '["a"]'}
    assert [(w.key, w.value) for w in commits[0].shared] == [
        ("user:log", ["a"]),
        ("app:last", "a"),
    ]


async def test_a_failed_run_keeps_every_completed_call(store: ThreadStore) -> None:
    writer = Agent(
        "writer",
        tools=[note],
        model=ScriptedModel([call("note", text="a"), call("note", text="b"), ModelError("down")]),
    )
    network = Network("notes", agents=[writer], router=lambda ctx: writer, state_schema=SCHEMA)
    with pytest.raises(ModelError):
        await network.run("go", thread=ThreadRef("t1", store=store))

    thread = await store.get_thread("t1")
    assert thread is not None
    assert thread.revision == 2 and [r.agent for r in thread.results] == ["writer", "writer"]
    assert thread.state == {"notes": ["a", "b"]}
    assert thread.messages[0].content == "go"
    # The thread goes on from there.
    result = await two_agents("c").run("more", thread=ThreadRef("t1", store=store))
    assert result["notes"] == ["a", "b", "c"]


async def test_a_cancelled_run_keeps_completed_calls_and_nothing_of_the_one_in_flight(
    store: ThreadStore,
) -> None:
    blocked = anyio.Event()

    async def third_blocks(request: Any) -> Any:
        if len(request.history) > 4:  # the third call: user message + two exchanges before it
            blocked.set()
            await anyio.sleep_forever()
        return call("note", text=f"n{len(request.history)}")

    writer = Agent("writer", tools=[note], model=ScriptedModel(third_blocks))

    def route(ctx: Any) -> Any:
        if ctx.call_count == 2:
            ctx.kv.set("router_mark", "before the third call")  # part of the call in flight
        return writer

    network = Network("notes", agents=[writer], router=route, state_schema=SCHEMA)
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: network.run("go", thread=ThreadRef("t1", store=store), sinks=[noop])
        )
        await blocked.wait()
        group.cancel_scope.cancel()

    thread = await store.get_thread("t1")
    assert thread is not None and thread.revision == 2 and len(thread.results) == 2
    assert thread.state == {"notes": ["n1", "n3"]}


async def noop(event: Any) -> None:
    pass


async def test_router_writes_after_the_last_call_are_saved(store: ThreadStore) -> None:
    agent = Agent("a", model=ScriptedModel(["hello"]))

    def route(ctx: Any) -> Any:
        if ctx.call_count == 1:
            ctx.kv.set("done", True)
            return None
        return agent

    await Network("notes", agents=[agent], router=route).run(
        "go", thread=ThreadRef("t1", store=store)
    )
    thread = await store.get_thread("t1")
    assert thread is not None and thread.state == {"done": True} and thread.revision == 2


async def test_deleted_keys_are_deleted_from_the_thread_and_the_user(
    store: ThreadStore,
) -> None:
    await two_agents("a").run("go", thread=ThreadRef("t1", user_id="u", store=store))

    @tool
    def forget(ctx: ToolContext) -> str:
        """Forget the notes."""
        ctx.kv.delete("notes")
        ctx.kv.delete("user:log")
        return "forgotten"

    agent = Agent("a", tools=[forget], model=ScriptedModel([call("forget")]))
    await Network("notes", agents=[agent], state_schema=SCHEMA).run(
        "forget", thread=ThreadRef("t1", user_id="u", store=store)
    )
    thread = await store.get_thread("t1")
    assert thread is not None
    assert thread.state == {"saw_secret": True} and thread.user_state == {}


async def test_a_run_without_agent_calls_still_saves_the_users_message(
    store: ThreadStore,
) -> None:
    agent = Agent("a", model=ScriptedModel(["never"]))
    await Network("notes", agents=[agent], router=lambda ctx: None).run(
        "hello?", thread=ThreadRef("t1", store=store)
    )
    thread = await store.get_thread("t1")
    assert thread is not None and [m.content for m in thread.messages] == ["hello?"]


async def test_a_run_without_agent_calls_saves_the_state_it_was_given_by_scope(
    store: ThreadStore,
) -> None:
    # How a thread's state is changed outside an agent (ADK: append_event with a state_delta).
    agent = Agent("a", model=ScriptedModel(["never"]))
    network = Network("notes", agents=[agent], router=lambda ctx: None)
    given = {"notes": ["set by hand"], "user:tz": "UTC", "app:motd": "hi", "temp:x": 1}
    await network.run("settings", state=given, thread=ThreadRef("t1", user_id="u", store=store))
    thread = await store.get_thread("t1")
    assert thread is not None and thread.state == {"notes": ["set by hand"]}
    assert thread.user_state == {"user:tz": "UTC"} and thread.app_state == {"app:motd": "hi"}
    other = await network.run("hi", thread=ThreadRef("t2", user_id="u", store=store))
    assert other.state.data == {"user:tz": "UTC", "app:motd": "hi"}  # no thread key, no temp:


async def test_an_empty_input_writes_state_and_adds_no_message(store: ThreadStore) -> None:
    # ADK's test_session_state / test_app_state_is_shared_by_all_users_of_app: an event that
    # carries only a state_delta adds state and nothing the model reads. `run("", state=...)`
    # stored an empty user message, which the next turn sent to the model (two user
    # messages in a row, the first empty: a request some providers refuse).
    seen: list[list[tuple[str, str]]] = []

    def answer(request: Any) -> str:
        seen.append([(m.role, m.content) for m in request.messages if m.role != "system"])
        return "ok"

    agent = Agent("a", model=ScriptedModel(answer))
    settings = Network("notes", agents=[agent], router=lambda ctx: None)
    chat = Network("notes", agents=[agent], router=lambda ctx: None if ctx.call_count else agent)
    given = {"user:tz": "UTC", "app:motd": "hi", "notes": ["by hand"]}
    result = await settings.run("", state=given, thread=ThreadRef("t1", user_id="u", store=store))
    assert list(result.state.messages) == []
    thread = await store.get_thread("t1")
    assert thread is not None and list(thread.messages) == [] and thread.revision == 1
    assert thread.state == {"notes": ["by hand"]} and thread.user_state == {"user:tz": "UTC"}
    other = await settings.run("", thread=ThreadRef("t2", user_id="v", store=store))
    assert other.state.data == {"app:motd": "hi"}  # the app's key, seen by another user
    await chat.run("hello", thread=ThreadRef("t1", user_id="u", store=store))
    assert seen == [[("user", "hello")]]


async def test_last_result_is_this_runs_and_results_hold_the_threads(store: ThreadStore) -> None:
    # AgentKit's `lastResult` is the last of `state.results`: after history loads, the
    # previous turn's. Here a run starts with `last_result` None, so a router's
    # `ctx.last_result is None` means "this run has not called an agent yet".
    agent = Agent("a", model=ScriptedModel(lambda request: "hi"))
    seen: list[tuple[int, str | None, int]] = []

    def route(ctx: Any) -> Any:
        last = ctx.last_result.agent if ctx.last_result is not None else None
        seen.append((ctx.call_count, last, len(ctx.state.results)))
        return agent if ctx.last_result is None else None

    network = Network("notes", agents=[agent], router=route)
    for text in ("first", "second"):
        await network.run(text, thread=ThreadRef("t1", store=store))
    assert seen == [(0, None, 0), (1, "a", 1), (0, None, 1), (1, "a", 2)]


async def test_output_is_this_runs_text_only(store: ThreadStore) -> None:
    talker = Agent("a", model=ScriptedModel(["first answer"]))
    await Network("notes", agents=[talker]).run("one", thread=ThreadRef("t1", store=store))
    quiet = Agent("a", tools=[note], model=ScriptedModel([call("note", text="x")]))
    second = await Network("notes", agents=[quiet], state_schema=SCHEMA).run(
        "two", thread=ThreadRef("t1", store=store)
    )
    assert second.output is None


# -- scopes ---------------------------------------------------------------------------------------


async def test_user_keys_follow_the_user_and_app_keys_everyone(store: ThreadStore) -> None:
    await two_agents("from-a1").run("go", thread=ThreadRef("a1", user_id="alice", store=store))

    other_thread = await two_agents("x").run(
        "go", thread=ThreadRef("a2", user_id="alice", store=store)
    )
    other_user = await two_agents("y").run("go", thread=ThreadRef("b1", user_id="bob", store=store))
    other_app = await two_agents("z").run(
        "go", thread=ThreadRef("o1", user_id="alice", app_name="elsewhere", store=store)
    )

    assert other_thread["notes"] == ["x"]  # thread keys stay in their thread
    assert other_thread["user:log"] == ["from-a1", "x"]  # alice's list, in every thread of hers
    assert other_user["user:log"] == ["y"]
    assert other_app["user:log"] == ["z"]  # user: keys live within one app
    seen = await store.get_thread("b1")
    assert seen is not None and seen.app_state == {"app:last": "y"}  # the app's latest write
    assert (await store.get_thread("o1")).app_state == {"app:last": "z"}  # type: ignore[union-attr]


async def test_temp_keys_are_shared_in_the_run_and_never_stored(store: ThreadStore) -> None:
    events: list[Any] = []

    async def sink(event: Any) -> None:
        events.append(event)

    result = await two_agents("a").run("go", thread=ThreadRef("t1", store=store), sinks=[sink])

    assert result["saw_secret"] is True  # the checker's tool saw the writer's temp: key
    assert result["temp:secret"] == "hush-a"
    stored = await everything_stored(store)
    # ("temp:" alone is in the tools' descriptions, which each call's record keeps)
    assert "hush-a" not in stored and "temp:secret" not in stored
    assert "notes" in stored  # (the dump does hold the run's data)
    streamed = json.dumps([e.model_dump(mode="json") for e in events])
    assert "hush-a" not in streamed and "temp:" not in streamed
    assert all("temp:" not in json.dumps(r.state_delta) for r in result.results)
    again = await two_agents("b").run("more", thread=ThreadRef("t1", store=store))
    assert "temp:secret" not in (await store.get_thread("t1")).state  # type: ignore[union-attr]
    assert again["temp:secret"] == "hush-b"


async def test_a_closed_schema_ignores_stored_keys_it_does_not_declare(
    store: ThreadStore,
) -> None:
    await two_agents("a").run("go", thread=ThreadRef("t1", user_id="u", store=store))

    class Narrow(BaseModel, extra="forbid"):
        notes: list[str] = []

    agent = Agent("a", model=ScriptedModel(["hi"]))
    result = await Network("notes", agents=[agent], state_schema=Narrow).run(
        "again", thread=ThreadRef("t1", user_id="u", store=store)
    )
    assert result.state.data == {"notes": ["a"]}
    thread = await store.get_thread("t1")
    assert thread is not None and thread.user_state == {"user:log": ["a"]}  # left alone


async def test_initial_state_is_written_over_the_thread_and_saved(store: ThreadStore) -> None:
    await two_agents("a").run("go", thread=ThreadRef("t1", store=store))
    result = await two_agents("b").run(
        "more", thread=ThreadRef("t1", store=store), state={"notes": ["reset"], "temp:x": 1}
    )
    assert result["notes"] == ["reset", "b"]
    thread = await store.get_thread("t1")
    assert thread is not None and thread.state["notes"] == ["reset", "b"]


# -- the thread's owner ------------------------------------------------------------------------


async def test_a_thread_refuses_another_user_or_app() -> None:
    store = MemoryStore()
    await two_agents("a").run("go", thread=ThreadRef("t1", user_id="alice", store=store))
    with pytest.raises(ThreadError, match="alice"):
        await two_agents("b").run("go", thread=ThreadRef("t1", user_id="mallory", store=store))
    with pytest.raises(ThreadError, match="notes"):
        await two_agents("b").run("go", thread=ThreadRef("t1", app_name="other", store=store))
    same = await two_agents("b").run(
        "go", thread=ThreadRef("t1", store=store)
    )  # user from the thread
    assert same["user:log"] == ["a", "b"]


async def test_store_and_user_need_a_thread_id() -> None:
    # the deprecated spelling of `thread=ThreadRef(...)`: warned, and refused without an id
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigurationError, match="thread_id"):
        await two_agents("a").run("go", store=MemoryStore())
    with pytest.warns(DeprecationWarning), pytest.raises(ConfigurationError, match="thread_id"):
        await two_agents("a").run("go", user_id="alice")


async def test_a_session_opened_on_a_thread_just_read_does_not_read_it_again(
    store: ThreadStore,
) -> None:
    """A server reads the thread to check a request (under its run lease) and hands it to the
    session: one read per run. The owner is checked all the same."""
    from network.threads import ThreadSession

    agent = Agent("a", model=ScriptedModel(lambda request: "hi"))
    network = Network("app", agents=[agent])
    await network.run("first", thread=ThreadRef("t", user_id="ann", store=store))
    thread = await store.get_thread("t")
    assert thread is not None
    reads: list[str] = []
    real = store.get_thread

    async def counted(thread_id: str) -> Any:
        reads.append(thread_id)
        return await real(thread_id)

    store.get_thread = counted  # type: ignore[method-assign]
    ref = ThreadRef("t", user_id="ann", store=store)
    session = await ThreadSession.open(network, ref, loaded=thread)
    assert reads == [] and [m.content for m in session.state.messages] == ["first", "hi"]
    for wrong in (ThreadRef("t", user_id="bob", store=store), ThreadRef("u", store=store)):
        with pytest.raises(ThreadError):
            await ThreadSession.open(network, wrong, loaded=thread)
    with pytest.raises(ThreadError, match="belongs to app"):
        await ThreadSession.open(Network("other", agents=[agent]), ref, loaded=thread)
    assert reads == []
