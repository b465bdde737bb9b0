"""`Agent(memory=...)`: the tools save and recall, the next thread's instructions recall,
one user's memories never reach another, and what a run recalled is seen (event, span)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel, call
from agents.capabilities.memory import MEMORY_RECALLED, Memory
from network import ConfigurationError, Network, ThreadRef
from network.memory import Memories, delete_thread
from network.threads import MemoryStore
from tests.network.telemetry.otel import Recorder

pytestmark = pytest.mark.anyio
ANN = ("assistant", "users", "ann")


def assistant(memory: Any, model: ScriptedModel, **options: Any) -> Network:
    agent = Agent("helper", system="You help with travel.", model=model, memory=memory)
    return Network("assistant", agents=[agent], router=until_answered(agent), **options)


def until_answered(agent: Agent) -> Any:
    """The agent again while its last call ran tools."""
    return lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None


def sent_system(model: ScriptedModel, at: int = 0) -> str:
    return str(model.requests[at].system[0].content)


def tool_result(result: Any, name: str) -> Any:
    records = [r for res in result.results for r in res.tool_calls if r.name == name]
    assert records, [res.tool_calls for res in result.results]
    return records[0]


async def test_saved_in_one_thread_recalled_in_the_next(tmp_path: Path) -> None:
    memories = Memories(tmp_path / "memories.db")
    threads = MemoryStore()
    first = ScriptedModel(
        [call("save_memory", text="Prefers a window seat on planes", key="seat"), "Noted."]
    )
    run = await assistant(memories, first).run(
        "I always want a window seat.", thread=ThreadRef("t1", user_id="ann", store=threads)
    )
    assert run.output == "Noted."
    assert tool_result(run, "save_memory").result == {"saved": "seat"}
    assert {s["function"]["name"] for s in first.requests[0].tools} >= {
        "save_memory",
        "recall_memories",
    }
    saved = await memories.get(ANN, "seat")
    assert saved is not None and (saved.thread_id, saved.user_id) == ("t1", "ann")
    assert saved.metadata == {"source": "tool", "agent": "helper"}
    # nothing was known at the first run: the instructions are the agent's own
    assert sent_system(first) == "You help with travel."

    second = ScriptedModel(["A window seat, as you like."])
    again = Memories(tmp_path / "memories.db")  # another store object: what the file keeps
    await assistant(again, second).run(
        "Book me a flight to Porto.", thread=ThreadRef("t2", user_id="ann", store=threads)
    )
    system = sent_system(second)
    assert system.startswith("You help with travel.\n\nWhat you remember about this user")
    assert "- Prefers a window seat on planes" in system


async def test_one_user_never_recalls_another_users_memories() -> None:
    memories = Memories("memory://")
    threads = MemoryStore()
    await memories.put(ANN, "seat", "Prefers a window seat on planes")
    model = ScriptedModel([call("recall_memories", query="seat preference"), "No idea."])
    run = await assistant(memories, model).run(
        "Which seat do I like?", thread=ThreadRef("t9", user_id="bob", store=threads)
    )
    assert sent_system(model) == "You help with travel."  # nothing recalled for bob
    assert tool_result(run, "recall_memories").result == []
    assert await memories.namespaces() == [ANN]


async def test_recall_tool_finds_by_meaning() -> None:
    memories = Memories("memory://")
    await memories.put(ANN, "seat", "Prefers a window seat on planes")
    await memories.put(ANN, "food", "Is vegetarian")
    model = ScriptedModel([call("recall_memories", query="airplane seating", limit=1), "ok"])
    run = await assistant(Memory(memories, recall=0), model).run(
        "hi", thread=ThreadRef("t1", user_id="ann", store=MemoryStore())
    )
    found = tool_result(run, "recall_memories").result
    assert [item["key"] for item in found] == ["seat"]
    assert sent_system(model) == "You help with travel."  # recall=0: nothing added


async def test_a_run_without_a_user_has_no_memory() -> None:
    memories = Memories("memory://")
    await memories.put(ANN, "seat", "Prefers a window seat on planes")
    model = ScriptedModel([call("save_memory", text="Likes tea"), "ok"])
    run = await assistant(memories, model).run("I like tea")
    record = tool_result(run, "save_memory")
    assert record.is_error and "no signed-in user" in record.content
    assert await memories.namespaces() == [ANN]
    assert sent_system(model) == "You help with travel."


async def test_bad_arguments_from_the_model_reach_the_model_and_write_nothing() -> None:
    memories = Memories("memory://")
    model = ScriptedModel(
        [
            [
                call("save_memory", text="   "),
                call("save_memory", text="x", key="bad\nkey"),
                call("recall_memories", query="tea", limit=500),
            ],
            "ok",
        ]
    )
    run = await assistant(memories, model).run(
        "hi", thread=ThreadRef("t1", user_id="ann", store=MemoryStore())
    )
    records = run.results[0].tool_calls
    assert [r.is_error for r in records] == [True, True, True]
    assert "text must not be blank" in records[0].content
    assert "key" in records[1].content
    assert "limit must be from 1 to 20" in records[2].content
    assert await memories.namespaces() == []


async def test_deleting_the_thread_forgets_what_its_run_saved() -> None:
    memories = Memories("memory://")
    threads = MemoryStore()
    model = ScriptedModel([call("save_memory", text="Prefers a window seat", key="seat"), "ok"])
    await assistant(memories, model).run(
        "window please", thread=ThreadRef("t1", user_id="ann", store=threads)
    )
    assert await memories.get(ANN, "seat") is not None
    deleted = await delete_thread(threads, memories, "t1")
    assert (deleted.threads, deleted.memories) == (1, 1)
    later = ScriptedModel(["ok"])
    await assistant(memories, later).run(
        "seat?", thread=ThreadRef("t2", user_id="ann", store=threads)
    )
    assert sent_system(later) == "You help with travel."


async def test_what_was_recalled_is_an_event_and_a_span_event() -> None:
    memories = Memories("memory://")
    await memories.put(ANN, "seat", "Prefers a window seat on planes")
    await memories.put(ANN, "food", "Is vegetarian")
    recorder = Recorder()
    seen: list[Any] = []

    async def sink(event: Any) -> None:
        seen.append(event)

    model = ScriptedModel(["ok"])
    network = assistant(Memory(memories, recall=1), model, telemetry=recorder.telemetry)
    await network.run(
        "Book a plane seat", thread=ThreadRef("t1", user_id="ann", store=MemoryStore()),
        sinks=[sink],
    )  # fmt: skip
    recalled = [e.value for e in seen if e.type == "CUSTOM" and e.name == MEMORY_RECALLED]
    assert len(recalled) == 1
    assert recalled[0]["keys"] == ["seat"] and recalled[0]["namespace"] == list(ANN)
    span = recorder.only("invoke_agent helper")
    events = [e for e in span.events if e.name == "agent_network.memory.recalled"]
    assert len(events) == 1
    attributes = events[0].attributes or {}
    assert attributes["agent_network.memory.namespace"] == "assistant/users/ann"
    assert list(attributes["agent_network.memory.keys"]) == ["seat"]  # type: ignore[arg-type]
    assert attributes["agent_network.memory.count"] == 1


async def test_recall_runs_once_per_run() -> None:
    memories = Memories("memory://")
    await memories.put(ANN, "seat", "Prefers a window seat on planes")
    searches = 0
    search = memories.search

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal searches
        searches += 1
        return await search(*args, **kwargs)

    memories.search = counted  # type: ignore[method-assign]
    model = ScriptedModel([call("save_memory", text="Likes tea"), "ok"])
    await assistant(memories, model).run(
        "seat", thread=ThreadRef("t1", user_id="ann", store=MemoryStore())
    )
    assert searches == 1 and len(model.requests) == 2
    assert sent_system(model, 0) == sent_system(model, 1)  # the same recall on both calls


async def test_a_message_opening_with_many_blanks_recalls_by_its_words() -> None:
    # Its first 8,000 characters were the query: blank, the store's InvalidMemoryError, and
    # the run failed before the model was asked.
    memories = Memories("memory://")
    await memories.put(ANN, "seat", "Prefers a window seat on planes")
    model = ScriptedModel(["ok"])
    await assistant(memories, model).run(
        "\n" * 9_000 + "Which seat do I like?",
        thread=ThreadRef("t1", user_id="ann", store=MemoryStore()),
    )
    assert sent_system(model).endswith("- Prefers a window seat on planes")


def test_bad_options_are_configuration_errors() -> None:
    memories = Memories("memory://")
    for bad in (
        {"namespace": "ann"},
        {"namespace": ()},
        {"recall": -1},
        {"recall": 1.5},
        {"min_score": float("nan")},
        {"min_score": 10**400},  # past a float's range: refused, not an OverflowError
        {"min_score": -1.5},
        {"tools": "yes"},
        {"heading": None},  # was "None" above the memories in the instructions
        {"heading": " "},
    ):
        with pytest.raises(ConfigurationError, match="Memory"):
            Memory(memories, **bad)
    with pytest.raises(ConfigurationError, match="Memories store"):
        Memory("memory://")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="memory must be"):
        Agent("a", memory="memory://")


async def test_a_namespace_function_and_placeholders() -> None:
    memories = Memories("memory://")
    await memories.put(("team", "ann"), "seat", "Prefers a window seat on planes")
    model = ScriptedModel(["ok"])
    memory = Memory(memories, namespace=("team", "{user_id}"))
    await assistant(memory, model).run(
        "seat", thread=ThreadRef("t1", user_id="ann", store=MemoryStore())
    )
    assert "window seat" in sent_system(model)
    # a user id holding a placeholder is taken as it is, never expanded again
    assert memory.namespace_of(_Run("{app_name}", "shop")) == ("team", "{app_name}")  # type: ignore[arg-type]
    by_fn = Memory(memories, namespace=lambda run: ("team", "ann"))
    model = ScriptedModel(["ok"])
    await assistant(by_fn, model).run("seat")  # no thread: the function still answers
    assert "window seat" in sent_system(model)


@pytest.mark.parametrize(
    "namespace",
    [
        ("shop", "users", "{user}"),
        ("{app}", "users", "{user_id}"),
        ("shop", "faq"),
        ("{app_name}",),
    ],
)
async def test_a_namespace_of_labels_that_would_be_every_users_is_refused(
    namespace: tuple[str, ...],
) -> None:
    # Before, a misspelt placeholder was kept as written and a namespace without {user_id}
    # was taken as it was: every user's runs read and wrote one namespace, so what the model
    # saved from Ann's words was recalled into Bob's instructions.
    with pytest.raises(ConfigurationError, match=r"Memory: namespace") as refused:
        Memory(Memories("memory://"), namespace=namespace)
    assert "{user_id}" in str(refused.value)


async def test_only_a_function_shares_a_namespace_between_users() -> None:
    memories = Memories("memory://")
    shared = Memory(memories, namespace=lambda run: ("shop", "faq"))
    first = ScriptedModel([call("save_memory", text="Returns take 30 days", key="returns"), "ok"])
    await assistant(shared, first).run(
        "How long do returns take?", thread=ThreadRef("t1", user_id="ann", store=MemoryStore())
    )
    second = ScriptedModel(["ok"])
    await assistant(shared, second).run(
        "returns", thread=ThreadRef("t2", user_id="bob", store=MemoryStore())
    )
    assert "Returns take 30 days" in sent_system(second)


class _Run:
    def __init__(self, user_id: str, app_name: str) -> None:
        self.user_id, self.app_name = user_id, app_name
