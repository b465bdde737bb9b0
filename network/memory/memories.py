"""`Memories`: long-term memory beside the thread store, searched by meaning.

A thread keeps one conversation; `user:` and `app:` keys share exact values across threads.
`Memories` keeps what outlives a conversation (facts, preferences) in namespaces the
application chooses, and finds them by meaning:

    memories = Memories("app.db")                         # the thread store's URLs
    await memories.put(("shop", "users", "ann"), "drink", "Ann drinks green tea")
    found = await memories.search(("shop", "users", "ann"), "what does Ann like?", limit=3)

Where they are kept, as for threads: `"memory://"` (this process), an SQLite file path or
`sqlite://` URL, a `postgresql://` URL (with pgvector), or `None` for the thread store's
default (`AGENT_NETWORK_STORE`, else `agent-network.db`); a thread `SQLStore` given as the
store means its database. Every argument is checked before anything is touched
(`network.memory._checks`: a bad one is `InvalidMemoryError` naming the field) and every text
is embedded before a write, so a failed call writes nothing. A database failure is
`MemoryDatabaseError` with a generic message (the driver's error is logged and kept as the
`__cause__`).

Tenants: a search looks in exactly one namespace, so one user's memories are never found by
a search for another's; listing namespaces and `forget(namespace=...)` take a prefix.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Self, TypeVar

import anyio
import numpy as np

from network.errors import (
    AgentNetworkError,
    ConfigurationError,
    EmbeddingError,
    InvalidMemoryError,
    MemoryDatabaseError,
)
from network.logger import LazyLogger
from network.memory._backend import Row, Selection
from network.memory._checks import (
    MAX_LIST,
    check_filter,
    check_key,
    check_limit,
    check_metadata,
    check_namespace,
    check_query,
    check_text,
    check_ttl,
    check_value,
    decode_namespace,
    encode_namespace,
)
from network.memory._opening import IN_PROCESS, backend_for, database_errors
from network.memory.embedders import Embedder, WordLlamaEmbedder
from network.memory.items import MemoryItem, Namespace, NewMemory
from network.numbers import check_number
from network.threads.ids import check_id
from network.threads.urls import shown_url

__all__ = ["IN_PROCESS", "Memories"]


log = LazyLogger("agent_network.memory")
T = TypeVar("T")


class Memories:
    """A store of long-term memories (see the module docstring).

    Args:
        store: where they are kept: `"memory://"`, an SQLite path or URL, a PostgreSQL URL, a
            thread `SQLStore` (its database), or None (the thread store's default).
        embedder: what embeds texts (default: `WordLlamaEmbedder()`, offline).
        ttl: seconds until a memory expires unless its write says otherwise (None: never).
        table_prefix: the prefix of the tables' names (SQL stores).
        vector_index: SQLite only: True needs sqlite-vec, False never uses it, None (the
            default) uses it when this Python can load it (`network.memory._sqlite`).
        ef_search: PostgreSQL only: HNSW's candidate list per scan (`hnsw.ef_search`, an
            int from 1 to 1000, as pgvector takes).
        pool_size: PostgreSQL only: the most connections the store opens (an int from 1).
        clock: `fn() -> Unix seconds` (tests move time with it).
    """

    def __init__(
        self,
        store: Any = None,
        *,
        embedder: Embedder | None = None,
        ttl: float | None = None,
        table_prefix: str = "agent_network_",
        vector_index: bool | None = None,
        ef_search: int = 100,
        pool_size: int = 10,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.embedder: Embedder = embedder if embedder is not None else WordLlamaEmbedder()
        if not isinstance(self.embedder, Embedder):
            raise ConfigurationError(
                f"Memories: embedder {self.embedder!r} has no name, dimensions and embed()"
            )
        # What the store records its vectors were made by, and their shape: checked here, not
        # met as "embeds to nothing" or an EmbeddingError (TypeError) at the first write.
        name, dimensions = self.embedder.name, self.embedder.dimensions
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(
                f"Memories: embedder.name must be a non-empty string, got {name!r}"
            )
        check_number("Memories: embedder.dimensions", dimensions, integer=True, minimum=1)
        self.ttl = check_ttl(ttl, "Memories: ttl")
        if not isinstance(table_prefix, str) or not table_prefix.replace("_", "").isalnum():
            raise ConfigurationError(
                f"Memories: table_prefix must be letters, digits and _, got {table_prefix!r}"
            )
        # Checked here, on every backend: unchecked, `vector_index="no"` was taken as True, a
        # NaN or 0 `ef_search` was a MemoryDatabaseError at the first call (PostgreSQL refused
        # the connection's setting), a `pool_size` of 0 asyncpg's ValueError, and a clock that
        # is no function a TypeError at the first write.
        if vector_index is not None and not isinstance(vector_index, bool):
            raise ConfigurationError(
                f"Memories: vector_index must be True, False or None, got {vector_index!r}"
            )
        check_number("Memories: ef_search", ef_search, integer=True, minimum=1, maximum=1000)
        check_number("Memories: pool_size", pool_size, integer=True, minimum=1)
        if not callable(clock):
            raise ConfigurationError(f"Memories: clock must be a function, got {clock!r}")
        self.url, self.backend = backend_for(
            store, table_prefix, vector_index, ef_search, pool_size
        )
        self._clock = clock
        self._ready = False
        self._setup_lock = anyio.Lock()

    @property
    def kind(self) -> str:
        """Where the memories are: "memory", "sqlite" or "postgresql"."""
        return self.backend.kind

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the database connections (a store used again reopens them)."""
        await self._guarded("close", self.backend.close())
        self._ready = False

    # -- writing ---------------------------------------------------------------------------

    async def put(
        self,
        namespace: Namespace,
        key: str,
        value: Any,
        *,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        ttl: float | None = None,
        thread_id: str | None = None,
        user_id: str | None = None,
    ) -> MemoryItem:
        """Write one memory (a new key adds, a known one replaces, keeping `created_at`).

        `text` is what is embedded (default: `value` when it is a string, else its JSON);
        `ttl` seconds until it expires (default: the store's); `thread_id` / `user_id` say
        where it was taken from, so that `forget(thread_id=...)` removes it."""
        entry = NewMemory(key, value, text, metadata, ttl, thread_id, user_id)
        return (await self.put_many(namespace, [entry]))[0]

    async def put_many(
        self, namespace: Namespace, entries: Sequence[NewMemory]
    ) -> list[MemoryItem]:
        """Write several memories of one namespace in one transaction (all or none); a key
        appears once at most."""
        space = encode_namespace(check_namespace(namespace))
        if not isinstance(entries, Sequence) or isinstance(entries, str):
            raise InvalidMemoryError("entries must be a list of NewMemory", field="entries")
        if not 1 <= len(entries) <= MAX_LIST:  # a count of items, not a limit given
            raise InvalidMemoryError(
                f"entries must hold 1 to {MAX_LIST} memories, got {len(entries)}",
                field="entries",
            )
        now = self._clock()
        rows: list[Row] = []
        keys: set[str] = set()
        for entry in entries:
            if not isinstance(entry, NewMemory):
                raise InvalidMemoryError(
                    f"entries must hold NewMemory objects, got {type(entry).__name__}",
                    field="entries",
                )
            key = check_key(entry.key)
            if key in keys:  # which one would win is no contract, and one item would be a lie
                raise InvalidMemoryError(f"entries hold key {key!r} twice", field="entries")
            keys.add(key)
            value = check_value(entry.value)
            text = check_text(entry.text if entry.text is not None else _text_of(entry.value))
            ttl = check_ttl(entry.ttl) if entry.ttl is not None else self.ttl
            rows.append(
                Row(
                    namespace=space,
                    key=key,
                    value=value,
                    text=text,
                    metadata=json.dumps(check_metadata(entry.metadata), ensure_ascii=False),
                    created_at=now,
                    updated_at=now,
                    expires_at=None if ttl is None else now + ttl,
                    thread_id=_provenance("thread_id", entry.thread_id),
                    user_id=_provenance("user_id", entry.user_id),
                )
            )
        vectors = await self._vectors([row.text for row in rows], "text")
        for row, vector in zip(rows, vectors, strict=True):
            row.vector = vector
        await self._setup()
        await self._guarded("put", self.backend.upsert(rows))
        return [self._item(row) for row in rows]

    async def delete(self, namespace: Namespace, key: str) -> bool:
        """Delete one memory; whether it was there."""
        space = encode_namespace(check_namespace(namespace))
        key = check_key(key)
        await self._setup()
        return await self._guarded("delete", self.backend.delete(space, key))

    async def forget(
        self,
        *,
        thread_id: str | None = None,
        user_id: str | None = None,
        namespace: Namespace | None = None,
    ) -> int:
        """Delete every memory taken from thread `thread_id`, or from user `user_id`, or kept
        under `namespace` (and the namespaces below it); returns how many. Call it when the
        thread or the user is deleted (`network.memory.delete_thread` does both)."""
        if thread_id is None and user_id is None and namespace is None:
            raise InvalidMemoryError(
                "forget() needs thread_id=, user_id= or namespace=", field="forget"
            )
        thread = _provenance("thread_id", thread_id)
        user = _provenance("user_id", user_id)
        prefix = None if namespace is None else encode_namespace(check_namespace(namespace))
        await self._setup()
        return await self._guarded("forget", self.backend.forget(thread, user, prefix))

    async def purge_expired(self) -> int:
        """Delete the memories whose ttl has run out (they are never returned meanwhile)."""
        await self._setup()
        return await self._guarded("purge_expired", self.backend.purge(self._clock()))

    # -- reading ---------------------------------------------------------------------------

    async def get(self, namespace: Namespace, key: str) -> MemoryItem | None:
        """One memory, or None (also when it expired)."""
        space = encode_namespace(check_namespace(namespace))
        key = check_key(key)
        await self._setup()
        row = await self._guarded("get", self.backend.get(space, key, self._clock()))
        return None if row is None else self._item(row)

    async def list(
        self,
        namespace: Namespace,
        *,
        filter: dict[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryItem]:
        """The namespace's memories that meet `filter`, the latest written first."""
        space = encode_namespace(check_namespace(namespace))
        conditions = check_filter(filter)
        limit = check_limit(limit, "limit", MAX_LIST)
        offset = check_limit(offset, "offset")
        await self._setup()
        rows = await self._guarded(
            "list", self.backend.listing(Selection(space, conditions, limit, self._clock()), offset)
        )
        return [self._item(row) for row in rows]

    async def search(
        self,
        namespace: Namespace,
        query: str,
        *,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float | None = None,
        exact: bool = False,
    ) -> builtins.list[MemoryItem]:
        """The namespace's memories nearest in meaning to `query`, best first, each with its
        `score` (cosine similarity): at most `limit`, only those meeting `filter`
        (`{"kind": "preference"}`, `{"kind": {"$in": [...]}}`) and scoring at least
        `min_score`. `exact=True` compares with every memory instead of using the index
        (how recall is measured)."""
        space = encode_namespace(check_namespace(namespace))
        query = check_query(query)
        conditions = check_filter(filter)
        limit = check_limit(limit)
        if min_score is not None and (
            isinstance(min_score, bool)
            or not isinstance(min_score, int | float)
            or not -1.0 <= min_score <= 1.0
        ):
            raise InvalidMemoryError(
                f"min_score must be a number from -1 to 1, got {min_score!r}", field="min_score"
            )
        if not isinstance(exact, bool):
            raise InvalidMemoryError(f"exact must be True or False, got {exact!r}", field="exact")
        vector = (await self._vectors([query], "query"))[0]
        await self._setup()
        found = await self._guarded(
            "search",
            self.backend.search(Selection(space, conditions, limit, self._clock()), vector, exact),
        )
        return [
            self._item(row, score)
            for row, score in found
            if min_score is None or score >= min_score
        ]

    async def namespaces(
        self, prefix: Namespace | None = None, *, limit: int = 1000
    ) -> builtins.list[Namespace]:
        """The namespaces holding memories (those under `prefix` when given), sorted."""
        under = None if prefix is None else encode_namespace(check_namespace(prefix, "prefix"))
        limit = check_limit(limit, "limit", MAX_LIST)
        await self._setup()
        names = await self._guarded(
            "namespaces", self.backend.namespaces(under, limit, self._clock())
        )
        return [decode_namespace(name) for name in names]

    # -- inside ----------------------------------------------------------------------------

    async def _setup(self) -> None:
        if self._ready:
            return
        async with self._setup_lock:
            if not self._ready:
                embedder = self.embedder
                await self._guarded("setup", self.backend.setup(embedder.name, embedder.dimensions))
                self._ready = True

    async def _vectors(self, texts: builtins.list[str], field: str) -> Any:
        """The texts' vectors, checked and scaled to unit length (float32)."""
        embedder = self.embedder
        try:
            raw = await embedder.embed(texts)
        except AgentNetworkError:
            raise
        except Exception as error:
            raise EmbeddingError(
                f"embedder {embedder.name} failed: {type(error).__name__}"
            ) from error
        try:
            vectors = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise EmbeddingError(f"embedder {embedder.name} returned no vectors") from error
        if vectors.shape != (len(texts), embedder.dimensions):
            raise EmbeddingError(
                f"embedder {embedder.name} returned vectors of shape {vectors.shape} for "
                f"{len(texts)} texts of {embedder.dimensions} dimensions"
            )
        if not np.isfinite(vectors).all():
            raise EmbeddingError(f"embedder {embedder.name} returned NaN or infinity")
        norms = np.linalg.norm(vectors, axis=1)
        empty = np.flatnonzero(norms == 0)
        if empty.size:
            raise InvalidMemoryError(
                f"{field} {texts[int(empty[0])]!r} embeds to nothing (no word the embedder "
                "knows): give another text",
                field=field,
            )
        return vectors / norms[:, None]

    async def _guarded(self, operation: str, work: Awaitable[T]) -> T:
        """`await work`, a database failure turned into `MemoryDatabaseError`."""
        try:
            return await work
        except AgentNetworkError:
            raise
        except database_errors() as error:
            log.error("memory_store.failed", operation=operation, kind=self.kind, error=repr(error))
            raise MemoryDatabaseError(
                f"the memory store ({self.kind}) failed in {operation}; the database error is "
                "logged",
                operation=operation,
            ) from error

    def _item(self, row: Row, score: float | None = None) -> MemoryItem:
        metadata = json.loads(row.metadata)
        return MemoryItem(
            namespace=decode_namespace(row.namespace),
            key=row.key,
            value=json.loads(row.value),
            text=row.text,
            metadata=metadata if isinstance(metadata, dict) else {},
            created_at=row.created_at,
            updated_at=row.updated_at,
            expires_at=row.expires_at,
            thread_id=row.thread_id,
            user_id=row.user_id,
            score=None if score is None else float(score),
        )

    def __repr__(self) -> str:
        return f"Memories({shown_url(self.url)!r}, embedder={self.embedder!r})"


def _text_of(value: Any) -> Any:
    """What a value embeds as when no text is given: a string as it is, else its JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return value  # check_value has refused it already


def _provenance(field: str, value: Any) -> str | None:
    if value is None:
        return None
    try:
        return check_id(field, value, allow_empty=field == "user_id")
    except ValueError as error:
        raise InvalidMemoryError(str(error), field=field) from None
