"""Recall@10 of the index against exact search, on filtered, per-tenant queries.

One table holds many tenants' memories; each query asks for one tenant's memories of one
kind (a namespace and a metadata filter, about 3% of the table), so an index that filters
after finding its candidates (HNSW without pgvector's iterative scan) comes back short. On
PostgreSQL the planner answers a table this small (3,200 rows) with a sequential scan, which
is exact; a table of many tenants (tens of thousands of rows) is answered from the HNSW
index. So the test turns the planner's sequential and bitmap scans off on the store's
connections (the index is then its cheapest plan, as on a large table), and counts the
searches the index answered short (asked again exactly): there must be none, which fails
if `hnsw.iterative_scan` is off.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from network.memory import Memories, NewMemory

pytestmark = pytest.mark.anyio

WORDS = [
    "tea",
    "coffee",
    "juice",
    "wine",
    "beer",
    "water",
    "jazz",
    "rock",
    "opera",
    "techno",
    "folk",
    "blues",
    "Lisbon",
    "Porto",
    "Paris",
    "Berlin",
    "Tokyo",
    "Madrid",
    "train",
    "plane",
    "bus",
    "bicycle",
    "window",
    "aisle",
    "cat",
    "dog",
    "parrot",
    "horse",
    "garden",
    "balcony",
    "novel",
    "poetry",
    "film",
    "theatre",
    "pasta",
    "sushi",
    "curry",
    "salad",
    "running",
    "cycling",
    "swimming",
    "chess",
    "piano",
    "violin",
    "guitar",
    "winter",
    "summer",
    "autumn",
    "beach",
    "mountain",
    "forest",
    "desert",
    "river",
    "morning",
    "evening",
    "vegetarian",
    "spicy",
    "sweet",
    "quiet",
    "loud",
    "early",
    "late",
]
TENANTS = 4
PER_TENANT = 800
KINDS = ("taste", "fact", "plan", "person")
QUERIES = 24


async def test_recall_at_10_of_filtered_tenant_queries(
    kind: str, make: Callable[..., Memories]
) -> None:
    memories = make()
    if kind == "postgresql":  # see the module docstring: the plan of a large table
        memories.backend._settings.update(  # type: ignore[attr-defined]
            {"enable_seqscan": "off", "enable_bitmapscan": "off"}
        )
    rng = random.Random(41)
    for tenant in range(TENANTS):
        await memories.put_many(
            ("app", "users", f"u{tenant}"),
            [
                NewMemory(
                    f"m{i}",
                    "the user likes " + " ".join(rng.sample(WORDS, 4)),
                    metadata={"kind": KINDS[i % len(KINDS)]},
                )
                for i in range(PER_TENANT)
            ],
        )
    if kind == "postgresql":
        memories.backend.exact_fallbacks = 0  # type: ignore[attr-defined]
        await analyze(memories)
    hits = 0
    for _ in range(QUERIES):
        namespace = ("app", "users", f"u{rng.randrange(TENANTS)}")
        query = " ".join(rng.sample(WORDS, 3))
        wanted = {"kind": rng.choice(KINDS)}
        indexed = await memories.search(namespace, query, filter=wanted, limit=10)
        exact = await memories.search(namespace, query, filter=wanted, limit=10, exact=True)
        assert len(indexed) == len(exact) == 10
        assert all(item.namespace == namespace for item in indexed)
        assert all(item.metadata["kind"] == wanted["kind"] for item in indexed)
        scores = [item.score for item in indexed]
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        hits += len({item.key for item in indexed} & {item.key for item in exact})
    recall = hits / (10 * QUERIES)
    print(f"recall@10 on {kind}: {recall:.3f}")
    assert recall >= 0.95
    if kind == "postgresql":
        assert memories.backend.exact_fallbacks == 0  # type: ignore[attr-defined]


async def analyze(memories: Memories) -> None:
    """Give the planner the table's statistics (autovacuum would, a minute later)."""
    pool = await memories.backend._connections()  # type: ignore[attr-defined]
    await pool.execute(f"ANALYZE {memories.backend._memories}")  # type: ignore[attr-defined]
