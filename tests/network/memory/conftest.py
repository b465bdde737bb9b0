"""Memory stores on every backend, for the tests of `network.memory`.

`memories_on(kind)` builds a fresh store: in this process, SQLite with the sqlite-vec index
(through sqlean), SQLite without it (exact search with numpy, as on a Python that cannot load
extensions), and PostgreSQL with pgvector (the server `pgvector_url` starts). All embed with
the real offline embedder (WordLlama from its wheel).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from network.memory import Memories

BACKENDS = ["memory", "sqlite-vec", "sqlite-exact", "postgresql"]
_tables = itertools.count()


class Clock:
    """A clock the tests move (`Memories(clock=...)`)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def store_of(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> tuple[Any, dict[str, Any]]:
    """The `store` argument and options of a fresh store of `kind`."""
    if kind == "memory":
        return "memory://", {}
    if kind == "sqlite-vec":
        return str(tmp_path / "memories.db"), {"vector_index": True}
    if kind == "sqlite-exact":
        return str(tmp_path / "memories-exact.db"), {"vector_index": False}
    url = request.getfixturevalue("pgvector_url")
    return url, {"table_prefix": f"t{next(_tables)}_"}


@pytest.fixture(params=BACKENDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def make(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, clock: Clock
) -> AsyncIterator[Callable[..., Memories]]:
    """`make(**options)`: a store of the test's backend (the same database each call)."""
    store, options = store_of(kind, tmp_path, request)
    opened: list[Memories] = []

    def build(**more: Any) -> Memories:
        memories = Memories(store, **{"clock": clock, **options, **more})
        opened.append(memories)
        return memories

    yield build
    for memories in opened:
        await memories.close()


@pytest.fixture
async def memories(make: Callable[..., Memories]) -> Memories:
    return make()
