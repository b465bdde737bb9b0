"""Extraction: a finished thread's facts written as memories with their provenance; a bad
answer from the model writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from agents.capabilities.memory import extract_memories
from network import Network, OutputValidationError, ThreadRef
from network.errors import InvalidMemoryError, ThreadError
from network.memory import Memories, delete_user
from network.threads import MemoryStore

pytestmark = pytest.mark.anyio
ANN = ("travel", "users", "ann")


async def finished_thread(threads: MemoryStore, thread_id: str = "t1", user: str = "ann") -> None:
    agent = Agent("helper", model=ScriptedModel(["A window seat it is. Enjoy Porto!"]))
    await Network("travel", agents=[agent]).run(
        "I'm vegetarian and I always want a window seat. Flying to Porto in May.",
        thread=ThreadRef(thread_id, user_id=user, store=threads),
    )


def answer(memories: list[dict[str, Any]]) -> str:
    return json.dumps({"memories": memories})


async def test_facts_of_a_thread_become_memories_with_provenance() -> None:
    threads = MemoryStore()
    await finished_thread(threads)
    memories = Memories("memory://")
    model = ScriptedModel(
        [
            answer(
                [
                    {"key": "diet", "text": "Is vegetarian"},
                    {"key": "seat", "text": "Prefers a window seat"},
                ]
            )
        ]
    )
    written = await extract_memories(memories, model, threads, "t1")
    assert [item.key for item in written] == ["diet", "seat"]
    request = model.requests[0]
    assert "lasting facts" in request.system[0].content
    transcript = request.history[0].content
    assert transcript.startswith("user: I'm vegetarian")
    assert "assistant: A window seat" in transcript
    stored = await memories.get(ANN, "seat")
    assert stored is not None and (stored.thread_id, stored.user_id) == ("t1", "ann")
    assert stored.metadata == {"source": "extraction"}
    found = await memories.search(ANN, "what food does she eat?", limit=1)
    assert [item.key for item in found] == ["diet"]
    # deleting the user forgets what was taken from her threads
    deleted = await delete_user(threads, memories, "ann")
    assert (deleted.threads, deleted.memories) == (1, 2)
    assert await memories.namespaces() == []


async def test_a_reused_key_replaces_the_memory() -> None:
    threads = MemoryStore()
    await finished_thread(threads, "t1")
    await finished_thread(threads, "t2")
    memories = Memories("memory://")
    await extract_memories(
        memories, ScriptedModel([answer([{"key": "seat", "text": "Prefers an aisle seat"}])]),
        threads, "t1",
    )  # fmt: skip
    await extract_memories(
        memories, ScriptedModel([answer([{"key": "seat", "text": "Prefers a window seat"}])]),
        threads, "t2",
    )  # fmt: skip
    [item] = await memories.list(ANN)
    assert (item.text, item.thread_id) == ("Prefers a window seat", "t2")
    # a key the answer says twice keeps its later text (one memory written, one handed back)
    twice = [{"key": "seat", "text": "Prefers an aisle seat"}, {"key": "seat", "text": "Any seat"}]
    written = await extract_memories(memories, ScriptedModel([answer(twice)]), threads, "t1")
    assert [(item.key, item.text) for item in written] == [("seat", "Any seat")]
    assert [item.text for item in await memories.list(ANN)] == ["Any seat"]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("I found two facts.", "not JSON"),
        ('{"facts": []}', 'no "memories" list'),
        (answer([{"key": "seat"}]), 'needs a "key" and a "text"'),
        (answer([{"key": "ok", "text": "fine"}, {"key": "bad\nkey", "text": "x"}]), "key"),
        (answer([{"key": "k", "text": "   "}]), "text"),
        (answer([{"key": f"k{i}", "text": "x"} for i in range(51)]), "over the limit"),
        ("[" * 100_000 + "]" * 100_000, "nests too deep"),  # was a RecursionError
    ],
)
async def test_a_bad_answer_is_refused_and_writes_nothing(raw: str, why: str) -> None:
    threads = MemoryStore()
    await finished_thread(threads)
    memories = Memories("memory://")
    with pytest.raises(OutputValidationError, match="nothing was written") as refused:
        await extract_memories(memories, ScriptedModel([raw]), threads, "t1")
    assert why in str(refused.value) and refused.value.raw == raw[:2_000]
    assert await memories.namespaces() == []


async def test_an_empty_answer_and_an_empty_thread_write_nothing() -> None:
    threads = MemoryStore()
    await finished_thread(threads)
    memories = Memories("memory://")
    empty = ScriptedModel(['{"memories": []}'])
    assert await extract_memories(memories, empty, threads, "t1") == []
    await threads.create_thread("empty", app_name="travel", user_id="ann")
    model = ScriptedModel([])
    assert await extract_memories(memories, model, threads, "empty") == []
    assert model.requests == []  # nothing to read: the model is not asked


async def test_missing_thread_and_anonymous_thread() -> None:
    threads = MemoryStore()
    memories = Memories("memory://")
    with pytest.raises(ThreadError, match="does not exist"):
        await extract_memories(memories, ScriptedModel([]), threads, "nope")
    await finished_thread(threads, "anon", user="")
    with pytest.raises(InvalidMemoryError, match="no user"):
        await extract_memories(memories, ScriptedModel([]), threads, "anon")
    written = await extract_memories(
        memories, ScriptedModel([answer([{"key": "seat", "text": "Window seat"}])]),
        threads, "anon", namespace=("travel", "guests"),
    )  # fmt: skip
    assert [item.namespace for item in written] == [("travel", "guests")]


@pytest.mark.parametrize("namespace", [("travel", ""), "ann", ("travel", "a\x00")])
async def test_a_bad_namespace_is_the_callers_error_before_the_model_is_asked(
    namespace: Any,
) -> None:
    # Before, the model was asked, and the store's refusal of the namespace was reported as
    # the model's answer refused (OutputValidationError).
    threads = MemoryStore()
    await finished_thread(threads)
    model = ScriptedModel([answer([{"key": "seat", "text": "Window seat"}])])
    with pytest.raises(InvalidMemoryError) as refused:
        await extract_memories(Memories("memory://"), model, threads, "t1", namespace=namespace)
    assert refused.value.field == "namespace" and model.requests == []
