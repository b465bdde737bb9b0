"""SQLite memory files of either layout: rows that keep their vector beside the sqlite-vec
index (files made now, searched with filters without reading the index), and files made
before rows kept it (the index is read for them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from network.errors import ConfigurationError
from network.memory import Memories, NewMemory
from network.memory._sqlite import vector_extension_available

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not vector_extension_available(), reason="sqlean-py and sqlite-vec are not installed"
    ),
]
ANN = ("shop", "users", "ann")
ITEMS = [
    NewMemory("tea", "Ann drinks green tea", metadata={"kind": "taste"}),
    NewMemory("jazz", "Ann listens to jazz", metadata={"kind": "taste"}),
    NewMemory("porto", "Ann lives in Porto", metadata={"kind": "fact"}),
]


async def filtered(path: Path) -> list[str]:
    memories = Memories(str(path), vector_index=True)
    try:
        found = await memories.search(ANN, "a hot drink", filter={"kind": "taste"}, limit=2)
        return [item.key for item in found]
    finally:
        await memories.close()


async def test_rows_keep_their_vectors_and_filtered_search_ranks_by_meaning(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memories.db"
    memories = Memories(str(path), vector_index=True)
    await memories.put_many(ANN, ITEMS)
    await memories.close()
    with sqlite3.connect(path) as conn:
        kept = conn.execute(
            "SELECT count(*) FROM agent_network_memories WHERE vector IS NOT NULL"
        ).fetchone()
    assert kept == (3,)
    assert await filtered(path) == ["tea", "jazz"]


async def test_a_file_made_before_rows_kept_vectors_is_searched_through_the_index(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memories.db"
    memories = Memories(str(path), vector_index=True)
    await memories.put_many(ANN, ITEMS)
    await memories.close()
    with sqlite3.connect(path) as conn:  # the earlier layout: vectors in the index only
        conn.execute("UPDATE agent_network_memories SET vector = NULL")
        conn.execute("DELETE FROM agent_network_memory_meta WHERE name = 'row_vectors'")
    assert await filtered(path) == ["tea", "jazz"]
    again = Memories(str(path), vector_index=True)
    await again.put(ANN, "coffee", "Ann drinks coffee", metadata={"kind": "taste"})
    await again.close()
    with sqlite3.connect(path) as conn:  # the file keeps its layout
        assert conn.execute(
            "SELECT count(*) FROM agent_network_memories WHERE vector IS NOT NULL"
        ).fetchone() == (0,)
    assert set(await filtered(path)) <= {"tea", "jazz", "coffee"}


async def test_an_indexed_file_opened_with_vector_index_false_says_so(tmp_path: Path) -> None:
    # Before, it said "install sqlean-py and sqlite-vec", which were installed: the caller
    # had turned the index off.
    path = tmp_path / "memories.db"
    async with Memories(str(path), vector_index=True) as memories:
        await memories.put_many(ANN, ITEMS)
    async with Memories(str(path), vector_index=False) as memories:
        with pytest.raises(ConfigurationError, match="which vector_index=False does not use"):
            await memories.search(ANN, "a hot drink")
    async with Memories(str(path)) as memories:  # the default opens it
        assert [item.key for item in await memories.search(ANN, "a hot drink", limit=1)] == ["tea"]
