"""What a memory backend does (`Backend`), on rows already checked and embedded.

`network.memory.memories.Memories` checks every argument and embeds every text before a
backend is called, so a backend only stores and finds: `Row`s whose namespace is encoded
(`network.memory._checks.encode_namespace`), whose value and metadata are JSON text, and whose
vector is unit length (float32). Times are Unix seconds; a row whose `expires_at` is past
`now` is never returned. Three backends implement it: in this process
(`network.memory._local`), SQLite (`network.memory._sqlite`), PostgreSQL with pgvector
(`network.memory._postgres`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from network.memory._checks import Condition

__all__ = ["Backend", "Row", "Selection"]


@dataclass(slots=True)
class Row:
    """One stored memory (see the module docstring for each field's form)."""

    namespace: str
    key: str
    value: str
    text: str
    metadata: str
    created_at: float
    updated_at: float
    expires_at: float | None
    thread_id: str | None
    user_id: str | None
    vector: Any = None  # numpy float32 array of unit length, on writes (and in memory)


@dataclass(frozen=True, slots=True)
class Selection:
    """Which rows a listing or a search takes: the live ones (as of `now`) of `namespace`
    that meet `conditions`, `limit` at the most."""

    namespace: str
    conditions: Sequence[Condition]
    limit: int
    now: float


class Backend(Protocol):
    """The storage under `Memories`."""

    kind: str  # "memory", "sqlite" or "postgresql": what `Memories.backend` reports

    async def setup(self, embedder: str, dimensions: int) -> None:
        """Create what is missing; refuse a store made with another embedder
        (`ConfigurationError`)."""
        ...

    async def upsert(self, rows: Sequence[Row]) -> None:
        """Write `rows` in one transaction; a known (namespace, key) keeps its `created_at`."""
        ...

    async def get(self, namespace: str, key: str, now: float) -> Row | None: ...

    async def delete(self, namespace: str, key: str) -> bool: ...

    async def listing(self, which: Selection, offset: int) -> list[Row]:
        """The selected rows, newest update first, from `offset` on."""
        ...

    async def namespaces(self, prefix: str | None, limit: int, now: float) -> list[str]:
        """The namespaces holding live rows (under `prefix` when given), sorted."""
        ...

    async def search(self, which: Selection, vector: Any, exact: bool) -> list[tuple[Row, float]]:
        """The selected rows nearest to `vector` first, with their cosine similarity.
        `exact`: compare with every row (no index)."""
        ...

    async def forget(self, thread_id: str | None, user_id: str | None, prefix: str | None) -> int:
        """Delete the rows taken from `thread_id`, from `user_id`, or under namespace
        `prefix` (any that is given); how many."""
        ...

    async def purge(self, now: float) -> int:
        """Delete the rows expired by `now`; how many."""
        ...

    async def close(self) -> None: ...
