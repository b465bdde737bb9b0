"""Memories in this process: a dict per namespace and exact search with numpy.

For tests, notebooks and one-process apps; nothing survives the process. Search compares the
query with every live row of the namespace (a matrix product), which is exact and, for the
sizes one process holds, fast (about 1 ms for 10,000 rows of 256 dimensions).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from network.errors import ConfigurationError
from network.memory._backend import Row, Selection
from network.memory._checks import SEPARATOR, Condition

__all__ = ["LocalBackend"]


class LocalBackend:
    """The `Backend` of `Memories("memory://")`."""

    kind = "memory"

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, Row]] = {}
        self._matrix: dict[str, tuple[list[Row], Any]] = {}  # per namespace, rebuilt on change
        self._embedder: tuple[str, int] | None = None

    async def setup(self, embedder: str, dimensions: int) -> None:
        if self._embedder is None:
            self._embedder = (embedder, dimensions)
        elif self._embedder != (embedder, dimensions):
            raise ConfigurationError(
                f"these memories were embedded by {self._embedder[0]} "
                f"({self._embedder[1]} dimensions), not {embedder} ({dimensions})"
            )

    async def upsert(self, rows: Sequence[Row]) -> None:
        for row in rows:
            space = self._rows.setdefault(row.namespace, {})
            known = space.get(row.key)
            if known is not None:
                row.created_at = known.created_at
            space[row.key] = row
            self._matrix.pop(row.namespace, None)

    async def get(self, namespace: str, key: str, now: float) -> Row | None:
        row = self._rows.get(namespace, {}).get(key)
        return row if row is not None and _live(row, now) else None

    async def delete(self, namespace: str, key: str) -> bool:
        space = self._rows.get(namespace)
        if space is None or space.pop(key, None) is None:
            return False
        self._matrix.pop(namespace, None)
        return True

    async def listing(self, which: Selection, offset: int) -> list[Row]:
        rows = [
            row
            for row in self._rows.get(which.namespace, {}).values()
            if _live(row, which.now) and _meets(row, which.conditions)
        ]
        rows.sort(key=lambda row: (-row.updated_at, row.key))
        return rows[offset : offset + which.limit]

    async def namespaces(self, prefix: str | None, limit: int, now: float) -> list[str]:
        found = sorted(
            name
            for name, space in self._rows.items()
            if (prefix is None or name == prefix or name.startswith(prefix + SEPARATOR))
            and any(_live(row, now) for row in space.values())
        )
        return found[:limit]

    async def search(self, which: Selection, vector: Any, exact: bool) -> list[tuple[Row, float]]:
        built = self._matrix.get(which.namespace)
        if built is None:
            rows = list(self._rows.get(which.namespace, {}).values())
            matrix = np.stack([row.vector for row in rows]) if rows else None
            built = self._matrix[which.namespace] = (rows, matrix)
        rows, matrix = built
        if matrix is None:
            return []
        scores = matrix @ vector
        found: list[tuple[Row, float]] = []
        for at in np.argsort(-scores, kind="stable"):
            row = rows[at]
            if _live(row, which.now) and _meets(row, which.conditions):
                found.append((row, float(scores[at])))
                if len(found) == which.limit:
                    break
        return found

    async def forget(self, thread_id: str | None, user_id: str | None, prefix: str | None) -> int:
        gone = 0
        for name, space in self._rows.items():
            under = prefix is not None and (name == prefix or name.startswith(prefix + SEPARATOR))
            for key in [
                key
                for key, row in space.items()
                if under
                or (thread_id is not None and row.thread_id == thread_id)
                or (user_id is not None and row.user_id == user_id)
            ]:
                del space[key]
                gone += 1
                self._matrix.pop(name, None)
        return gone

    async def purge(self, now: float) -> int:
        gone = 0
        for name, space in self._rows.items():
            for key in [key for key, row in space.items() if not _live(row, now)]:
                del space[key]
                gone += 1
                self._matrix.pop(name, None)
        return gone

    async def close(self) -> None:
        return None


def _live(row: Row, now: float) -> bool:
    return row.expires_at is None or row.expires_at > now


def _meets(row: Row, conditions: Sequence[Condition]) -> bool:
    if not conditions:
        return True
    metadata = json.loads(row.metadata)
    return all(condition.matches(metadata) for condition in conditions)
