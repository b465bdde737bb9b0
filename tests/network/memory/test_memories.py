"""`Memories` on every backend: one contract, real databases, the real offline embedder."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from network.errors import ConfigurationError, InvalidMemoryError
from network.memory import Memories, NewMemory, WordLlamaEmbedder
from tests.network.memory.conftest import Clock, store_of

pytestmark = pytest.mark.anyio

ANN = ("shop", "users", "ann")
BOB = ("shop", "users", "bob")


async def test_put_get_list_delete(memories: Memories, clock: Clock) -> None:
    first = await memories.put(ANN, "tea", "Ann drinks green tea", metadata={"kind": "taste"})
    assert first.namespace == ANN and first.text == "Ann drinks green tea"
    clock.now += 5
    second = await memories.put(ANN, "tea", {"drink": "matcha"}, text="Ann drinks matcha")
    assert second.value == {"drink": "matcha"}
    # the item a replacing put hands back keeps created_at, as the store does (was the
    # write's time on SQLite and PostgreSQL)
    assert (second.created_at, second.updated_at) == (first.created_at, first.created_at + 5)
    got = await memories.get(ANN, "tea")
    assert got is not None and got.value == {"drink": "matcha"} and got.metadata == {}
    assert got.created_at == first.created_at and got.updated_at == first.created_at + 5
    await memories.put(ANN, "city", "Ann lives in Lisbon")
    assert [item.key for item in await memories.list(ANN)] == ["city", "tea"]
    assert [item.key for item in await memories.list(ANN, limit=1, offset=1)] == ["tea"]
    assert await memories.delete(ANN, "tea") is True
    assert await memories.delete(ANN, "tea") is False
    assert await memories.get(ANN, "tea") is None
    assert await memories.get(BOB, "city") is None


async def test_search_finds_by_meaning_within_one_namespace(memories: Memories) -> None:
    await memories.put_many(
        ANN,
        [
            NewMemory("tea", "Ann drinks green tea every morning"),
            NewMemory("city", "Ann lives in Lisbon, Portugal"),
            NewMemory("seat", "Ann prefers a window seat on planes"),
        ],
    )
    # Bob's memory is nearer to the query than any of Ann's, and never found for Ann
    await memories.put(BOB, "tea", "what does the user like to drink? tea, green tea")
    found = await memories.search(ANN, "what does the user like to drink?", limit=2)
    assert [item.key for item in found] == ["tea", "seat"] or found[0].key == "tea"
    assert all(item.namespace == ANN for item in found) and len(found) == 2
    assert found[0].score is not None and found[0].score > found[1].score  # type: ignore[operator]
    assert [item.key for item in await memories.search(BOB, "drink", limit=5)] == ["tea"]
    assert await memories.search(("shop", "users", "nobody"), "drink") == []


async def test_filters_keep_json_types(memories: Memories) -> None:
    await memories.put_many(
        ANN,
        [
            NewMemory("a", "likes jazz", metadata={"kind": "taste", "stars": 1, "ok": True}),
            NewMemory("b", "likes rock", metadata={"kind": "taste", "stars": 1.0, "ok": 1}),
            NewMemory("c", "lives in Porto", metadata={"kind": "fact", "stars": None}),
        ],
    )

    async def keys(filter: dict[str, Any]) -> list[str]:
        searched = {item.key for item in await memories.search(ANN, "music", filter=filter)}
        listed = {item.key for item in await memories.list(ANN, filter=filter)}
        assert searched == listed
        return sorted(listed)

    assert await keys({"kind": "taste"}) == ["a", "b"]
    assert await keys({"stars": 1}) == ["a", "b"]  # 1 and 1.0 are one JSON number
    assert await keys({"ok": True}) == ["a"]  # true is not 1
    assert await keys({"ok": 1}) == ["b"]
    assert await keys({"stars": None}) == ["c"]
    assert await keys({"kind": {"$in": ["fact", "other"]}}) == ["c"]
    assert await keys({"kind": "taste", "ok": True}) == ["a"]
    assert await keys({"missing": "x"}) == []


async def test_ttl_hides_then_purges(make: Callable[..., Memories], clock: Clock) -> None:
    memories = make(ttl=60)
    await memories.put(ANN, "short", "a passing mood", ttl=10)
    await memories.put(ANN, "default", "a preference for a month")
    await memories.put(ANN, "long", "a lasting fact", ttl=3600)
    clock.now += 11
    assert await memories.get(ANN, "short") is None
    assert {item.key for item in await memories.search(ANN, "mood", limit=5)} == {"default", "long"}
    clock.now += 50
    assert [item.key for item in await memories.list(ANN)] == ["long"]
    assert await memories.namespaces() == [ANN]
    assert await memories.purge_expired() == 2
    clock.now += 3600
    assert await memories.namespaces() == []
    assert await memories.search(ANN, "fact") == []


async def test_forget_by_thread_user_and_namespace(memories: Memories) -> None:
    await memories.put(ANN, "tea", "likes tea", thread_id="t1", user_id="ann")
    await memories.put(ANN, "jazz", "likes jazz", thread_id="t2", user_id="ann")
    await memories.put(("shop", "facts"), "hours", "the shop opens at 9", thread_id="t2")
    await memories.put(("shop", "users", "ann2"), "x", "another user")
    await memories.put(BOB, "tea", "hates tea", thread_id="t3", user_id="bob")
    assert await memories.forget(thread_id="t2") == 2
    assert [item.key for item in await memories.list(ANN)] == ["tea"]
    assert await memories.forget(user_id="ann") == 1
    assert await memories.forget(namespace=("shop", "users", "bob")) == 1
    assert await memories.namespaces() == [("shop", "users", "ann2")]  # not a prefix of ann
    assert await memories.namespaces(("shop",)) == [("shop", "users", "ann2")]
    assert await memories.namespaces(("shop", "users", "ann")) == []


async def test_a_second_store_on_the_database_sees_the_memories(
    kind: str, make: Callable[..., Memories]
) -> None:
    if kind == "memory":
        pytest.skip("memories kept in a process die with their store")
    await make().put(ANN, "tea", "Ann drinks green tea")
    again = make()
    assert [item.key for item in await again.search(ANN, "beverage")] == ["tea"]


def test_a_store_serves_one_event_loop_after_another(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # As each `anyio.run` (or a test's own loop) is a new loop: on PostgreSQL the pool the
    # first loop opened was used from the second, a MemoryDatabaseError ("another operation
    # is in progress"), then "Event loop is closed" for every call after.
    store, options = store_of(kind, tmp_path, request)
    memories = Memories(store, **options)

    async def put_and_search(key: str) -> list[str]:
        await memories.put(ANN, key, "Ann drinks green tea")
        return sorted(item.key for item in await memories.search(ANN, "tea", limit=5))

    assert anyio.run(put_and_search, "a") == ["a"]
    assert anyio.run(put_and_search, "b") == ["a", "b"]
    assert anyio.run(put_and_search, "c") == ["a", "b", "c"]
    anyio.run(memories.close)


async def test_another_embedder_is_refused(kind: str, make: Callable[..., Memories]) -> None:
    await make().put(ANN, "tea", "Ann drinks green tea")
    if kind == "memory":
        return  # one store object, one embedder
    other = make(embedder=WordLlamaEmbedder(dimensions=128))
    with pytest.raises(ConfigurationError, match="embedded by wordllama/l2_supercat"):
        await other.get(ANN, "tea")


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("namespace", {"namespace": "ann"}),
    ("namespace", {"namespace": ()}),
    ("namespace", {"namespace": ("a",) * 9}),
    ("namespace", {"namespace": ("shop", "")}),
    ("namespace", {"namespace": ("shop", "a\x00b")}),
    ("namespace", {"namespace": ("shop", "\ud800")}),
    ("namespace", {"namespace": ("shop", "x" * 257)}),
    ("key", {"key": ""}),
    ("key", {"key": "a\nb"}),
    ("key", {"key": 7}),
    ("value", {"value": math.nan}),
    ("value", {"value": {"x": math.inf}}),
    ("value", {"value": {1, 2}}),
    ("value", {"value": "x" * 70_000}),
    ("value", {"value": "\udc00"}),
    ("value", {"value": {1: "a", "1": "b"}}),  # was kept as {"1": "b"}
    ("value", {"value": [{"n": {2: "x"}}], "text": "two"}),  # read back as {"2": "x"}
    ("value", {"value": _nested(100_000), "text": "deep"}),  # was a RecursionError
    ("text", {"value": {"a": 1}, "text": "   "}),
    ("text", {"text": "y" * 9_000}),
    # kept on SQLite and in memory, a MemoryDatabaseError on PostgreSQL (its text has no NUL)
    ("text", {"value": "a\x00b"}),
    ("text", {"value": {"a": 1}, "text": "a\x00b"}),
    ("metadata", {"metadata": ["kind"]}),
    ("metadata", {"metadata": {"bad name": 1}}),
    ("metadata", {"metadata": {"n": math.nan}}),
    ("metadata", {"metadata": {"n": {"nested": 1}}}),
    ("metadata", {"metadata": {"n": 2**63}}),  # SQLite cannot bind it: a filter on it failed
    ("metadata", {"metadata": {"n": -(2**63) - 1}}),
    ("metadata", {"metadata": {f"k{i}": i for i in range(33)}}),
    ("ttl", {"ttl": math.nan}),
    ("ttl", {"ttl": -1}),
    ("ttl", {"ttl": math.inf}),
    ("ttl", {"ttl": True}),
    ("ttl", {"ttl": 0}),
    ("ttl", {"ttl": 10**400}),  # was an OverflowError from math.isfinite
    ("thread_id", {"thread_id": "t\x00"}),
]


@pytest.mark.parametrize(
    ("field", "bad"), HOSTILE, ids=[f"{f}-{i}" for i, (f, _) in enumerate(HOSTILE)]
)
async def test_hostile_writes_are_refused_and_write_nothing(
    memories: Memories, field: str, bad: dict[str, Any]
) -> None:
    arguments: dict[str, Any] = {"namespace": ANN, "key": "k", "value": "a fact", **bad}
    namespace, key, value = arguments.pop("namespace"), arguments.pop("key"), arguments.pop("value")
    with pytest.raises(InvalidMemoryError) as refused:
        await memories.put(namespace, key, value, **arguments)
    assert refused.value.field.split(".")[0].split("[")[0] == field
    assert await memories.namespaces() == []


@pytest.mark.parametrize(
    ("field", "call"),
    [
        ("query", lambda m: m.search(ANN, "  ")),
        ("query", lambda m: m.search(ANN, "q" * 9_000)),
        ("limit", lambda m: m.search(ANN, "tea", limit=0)),
        ("limit", lambda m: m.search(ANN, "tea", limit=True)),
        ("limit", lambda m: m.search(ANN, "tea", limit=10**6)),
        ("limit", lambda m: m.list(ANN, limit=-1)),
        ("offset", lambda m: m.list(ANN, offset=-1)),
        ("filter", lambda m: m.search(ANN, "tea", filter=["kind"])),
        ("filter", lambda m: m.search(ANN, "tea", filter={"kind": {"$gt": 1}})),
        ("filter", lambda m: m.search(ANN, "tea", filter={"kind": {"$in": []}})),
        ("filter", lambda m: m.list(ANN, filter={"n": math.nan})),
        ("filter", lambda m: m.list(ANN, filter={"n": 2**63})),  # was SQLite's OverflowError
        ("filter", lambda m: m.search(ANN, "tea", filter={"n": {"$in": [1, 10**30]}})),
        ("filter", lambda m: m.list(ANN, filter={"x'); DROP TABLE": 1})),
        ("min_score", lambda m: m.search(ANN, "tea", min_score=math.nan)),
        ("prefix", lambda m: m.namespaces(("",))),
        ("forget", lambda m: m.forget()),
        ("entries", lambda m: m.put_many(ANN, ["not a memory"])),
        # one key twice: was two items handed back for the one kept
        ("entries", lambda m: m.put_many(ANN, [NewMemory("k", "a"), NewMemory("k", "b")])),
    ],
)
async def test_hostile_reads_are_refused(memories: Memories, field: str, call: Any) -> None:
    await memories.put(ANN, "tea", "Ann drinks tea")
    with pytest.raises(InvalidMemoryError) as refused:
        await call(memories)
    assert refused.value.field.split(".")[0] == field
    assert [item.key for item in await memories.list(ANN)] == ["tea"]


async def test_put_many_of_no_entries_says_how_many_it_takes(memories: Memories) -> None:
    # Before: "entries must be an int from 1 to 10000, got 0", of a list.
    with pytest.raises(InvalidMemoryError, match=r"^entries must hold 1 to 10000 memories, got 0$"):
        await memories.put_many(ANN, [])


async def test_names_and_quotes_are_data(memories: Memories) -> None:
    odd = ("shop", "users", 'o\'brien "x" ; DROP TABLE', "ünïcode 雪")
    await memories.put(odd, "k'ey", "a fact with 'quotes'", metadata={"note": "it's"})
    assert await memories.namespaces(("shop",)) == [odd]
    found = await memories.search(odd, "quotes", filter={"note": "it's"})
    assert [item.key for item in found] == ["k'ey"]


class Broken:
    """An embedder that answers badly, in the way `mode` says."""

    name = "wordllama/l2_supercat"
    dimensions = 256

    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def embed(self, texts: Any) -> Any:
        if self.mode == "raises":
            raise RuntimeError("provider down")
        if self.mode == "nan":
            return np.full((len(texts), 256), np.nan)
        if self.mode == "short":
            return np.ones((len(texts), 12))
        if self.mode == "zero":
            return np.zeros((len(texts), 256))
        return np.ones((len(texts) + 1, 256))


@pytest.mark.parametrize("mode", ["raises", "nan", "short", "count"])
async def test_a_broken_embedder_is_an_embedding_error_and_writes_nothing(
    make: Callable[..., Memories], mode: str
) -> None:
    from network.errors import EmbeddingError

    memories = make(embedder=Broken(mode))
    with pytest.raises(EmbeddingError):
        await memories.put(ANN, "tea", "Ann drinks tea")
    assert await memories.namespaces() == []


class Shaped:
    """An embedder of any name and dimensions (never asked)."""

    def __init__(self, name: Any, dimensions: Any) -> None:
        self.name, self.dimensions = name, dimensions

    async def embed(self, texts: list[str]) -> Any:
        raise AssertionError("never asked")


@pytest.mark.parametrize(
    ("name", "dimensions", "field"),
    [
        ("e", 0, "dimensions"),  # was "text 't' embeds to nothing" at the first write
        ("e", "256", "dimensions"),  # was an EmbeddingError (TypeError) at the first write
        ("e", True, "dimensions"),  # was taken as 1
        ("e", math.nan, "dimensions"),
        (None, 256, "name"),  # was recorded with the vectors
        ("  ", 256, "name"),
    ],
)
def test_an_embedder_of_no_name_or_shape_is_refused_when_the_store_is_made(
    name: Any, dimensions: Any, field: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"embedder.{field}"):
        Memories("memory://", embedder=Shaped(name, dimensions))  # type: ignore[arg-type]


async def test_text_that_embeds_to_nothing_is_refused(make: Callable[..., Memories]) -> None:
    memories = make(embedder=Broken("zero"))
    with pytest.raises(InvalidMemoryError, match="embeds to nothing") as refused:
        await memories.put(ANN, "k", "no word it knows")
    assert refused.value.field == "text"
    with pytest.raises(InvalidMemoryError, match="embeds to nothing"):
        await memories.search(ANN, "no word it knows")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"vector_index": "no"}, "vector_index"),  # was taken as True
        ({"vector_index": 0}, "vector_index"),
        ({"ef_search": math.nan}, "ef_search"),  # each was refused by PostgreSQL at the first
        ({"ef_search": 0}, "ef_search"),  # call: a MemoryDatabaseError saying nothing of it
        ({"ef_search": 1001}, "ef_search"),
        ({"ef_search": True}, "ef_search"),
        ({"pool_size": 0}, "pool_size"),  # was asyncpg's ValueError at the first call
        ({"pool_size": 2.5}, "pool_size"),
        ({"clock": 5.0}, "clock"),  # was a TypeError at the first write
    ],
)
@pytest.mark.parametrize("store", ["memory://", "memories.db", "postgresql://u@localhost/db"])
def test_a_stores_options_are_checked_when_it_is_made(
    store: str, options: dict[str, Any], field: str, tmp_path: Any, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match=rf"^Memories: {field} must be"):
        Memories(store, embedder=Shaped("e", 4), **options)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
