"""Memories in PostgreSQL with pgvector: an HNSW index, iterative scans on.

The table keeps each memory's vector in a `vector(d)` column with an HNSW index
(`vector_cosine_ops`), and its metadata as `jsonb` (filters are containment tests,
`metadata @> '{"kind": "preference"}'`, which keep JSON's types: `true` is not 1).

Why iterative scans: HNSW finds `hnsw.ef_search` candidates first and applies the `WHERE`
clause after, so a query for one tenant's memories (or with a metadata filter) on a table
shared by many tenants returns fewer rows than asked for, or none, while the tenant has
plenty. pgvector 0.8's `hnsw.iterative_scan` keeps scanning the index until the limit is
met; every connection of the store turns it on (`relaxed_order`; the results are re-sorted
by distance) with `ef_search` 100 unless told otherwise. The scan still stops after
`hnsw.max_scan_tuples` (20,000 by default): a search that comes back short is asked again
without the index (an exact scan of the namespace's rows, found through its btree index),
so a search never returns fewer than `limit` rows while more match.

Needs the `vector` extension (created on first use when the role may: `CREATE EXTENSION IF
NOT EXISTS vector`). Connections come from an asyncpg pool of the store's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from network.errors import ConfigurationError
from network.memory._backend import Row, Selection
from network.memory._checks import SEPARATOR, Condition

__all__ = ["PostgresBackend"]

_COLUMNS = (
    "namespace, key, value, text, metadata::text, created_at, updated_at, expires_at, "
    "thread_id, user_id"
)


class PostgresBackend:
    """The `Backend` of `Memories("postgresql://...")` (see the module docstring)."""

    kind = "postgresql"

    def __init__(
        self,
        dsn: str,
        *,
        table_prefix: str = "agent_network_",
        ef_search: int = 100,
        pool_size: int = 10,
    ) -> None:
        self.dsn = dsn
        self._memories = f"{table_prefix}memories"
        self._meta = f"{table_prefix}memory_meta"
        self._settings = {
            "hnsw.iterative_scan": "relaxed_order",
            "hnsw.ef_search": str(ef_search),
        }
        self._pool_size = pool_size
        self._pool: Any = None
        self._pool_loop: Any = None  # the event loop the pool's connections belong to
        self.exact_fallbacks = 0  # searches the index answered short, asked again exactly

    async def _connections(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is not loop:
            # Opened by an earlier loop (one `asyncio.run` / `anyio.run` after another, as the
            # other backends serve): its connections cannot be used, or closed, from this one.
            # Used, the store failed with a MemoryDatabaseError ("another operation is in
            # progress"), then "Event loop is closed".
            self._drop_pool()
        if self._pool is None:
            import asyncpg  # noqa: PLC0415 (loaded with the first PostgreSQL store)

            self._pool = await asyncpg.create_pool(
                self.dsn, min_size=1, max_size=self._pool_size, server_settings=self._settings
            )
            self._pool_loop = loop
        return self._pool

    def _drop_pool(self) -> None:
        """Forget a pool of another event loop, its sockets closed without a goodbye (the
        server ends their sessions)."""
        stale, self._pool, self._pool_loop = self._pool, None, None
        with contextlib.suppress(Exception):  # its loop may be closed: nothing more to do
            stale.terminate()

    async def setup(self, embedder: str, dimensions: int) -> None:
        pool = await self._connections()
        m, meta = self._memories, self._meta
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", m)
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {meta} (name text PRIMARY KEY, value text)"
            )
            stored = {row[0]: row[1] for row in await conn.fetch(f"SELECT name, value FROM {meta}")}
            if stored:
                if (stored.get("embedder"), stored.get("dimensions")) != (
                    embedder,
                    str(dimensions),
                ):
                    raise ConfigurationError(
                        f"the memories in table {m} were embedded by {stored.get('embedder')} "
                        f"({stored.get('dimensions')} dimensions), not {embedder} ({dimensions}):"
                        " vectors of two models do not compare; use another table_prefix"
                    )
                return
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {m} (id bigserial PRIMARY KEY, "
                'namespace text COLLATE "C" NOT NULL, key text NOT NULL, value text NOT NULL, '
                "text text NOT NULL, metadata jsonb NOT NULL, created_at double precision NOT "
                "NULL, updated_at double precision NOT NULL, expires_at double precision, "
                f"thread_id text, user_id text, embedding vector({dimensions}) NOT NULL, "
                "UNIQUE (namespace, key))"
            )
            await conn.execute(
                f"CREATE INDEX IF NOT EXISTS {m}_embedding ON {m} "
                "USING hnsw (embedding vector_cosine_ops)"
            )
            for name, columns in (
                ("updated", "namespace, updated_at"),
                ("thread", "thread_id"),
                ("user", "user_id"),
                ("expires", "expires_at"),
            ):
                await conn.execute(f"CREATE INDEX IF NOT EXISTS {m}_{name} ON {m} ({columns})")
            await conn.executemany(
                f"INSERT INTO {meta} (name, value) VALUES ($1, $2)",
                [("embedder", embedder), ("dimensions", str(dimensions)), ("index", "hnsw")],
            )

    async def upsert(self, rows: Sequence[Row]) -> None:
        pool = await self._connections()
        m = self._memories
        async with pool.acquire() as conn, conn.transaction():
            await conn.executemany(
                f"INSERT INTO {m} (namespace, key, value, text, metadata, created_at, "
                "updated_at, expires_at, thread_id, user_id, embedding) VALUES "
                "($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11::text::vector) "
                "ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, "
                "text = EXCLUDED.text, metadata = EXCLUDED.metadata, "
                "updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at, "
                "thread_id = EXCLUDED.thread_id, user_id = EXCLUDED.user_id, "
                "embedding = EXCLUDED.embedding",
                [
                    (
                        row.namespace,
                        row.key,
                        row.value,
                        row.text,
                        row.metadata,
                        row.created_at,
                        row.updated_at,
                        row.expires_at,
                        row.thread_id,
                        row.user_id,
                        _vector_text(row.vector),
                    )
                    for row in rows
                ],
            )
            # A known key kept its created_at: the items handed back say so too.
            for space in {row.namespace for row in rows}:
                kept = await conn.fetch(
                    f"SELECT key, created_at FROM {m} WHERE namespace = $1 AND key = ANY($2)",
                    space,
                    [row.key for row in rows if row.namespace == space],
                )
                created = dict(kept)
                for row in rows:
                    if row.namespace == space:
                        row.created_at = created.get(row.key, row.created_at)

    async def get(self, namespace: str, key: str, now: float) -> Row | None:
        pool = await self._connections()
        found = await pool.fetchrow(
            f"SELECT {_COLUMNS} FROM {self._memories} WHERE namespace = $1 AND key = $2 "
            "AND (expires_at IS NULL OR expires_at > $3)",
            namespace,
            key,
            now,
        )
        return None if found is None else Row(*found)

    async def delete(self, namespace: str, key: str) -> bool:
        pool = await self._connections()
        done = await pool.execute(
            f"DELETE FROM {self._memories} WHERE namespace = $1 AND key = $2", namespace, key
        )
        return bool(done != "DELETE 0")

    async def listing(self, which: Selection, offset: int) -> list[Row]:
        pool = await self._connections()
        filters, params = _conditions(which.conditions, first=4)
        rows = await pool.fetch(
            f"SELECT {_COLUMNS} FROM {self._memories} WHERE namespace = $1 "
            f"AND (expires_at IS NULL OR expires_at > $2){filters} "
            f"ORDER BY updated_at DESC, key LIMIT $3 OFFSET ${4 + len(params)}",
            which.namespace,
            which.now,
            which.limit,
            *params,
            offset,
        )
        return [Row(*row) for row in rows]

    async def namespaces(self, prefix: str | None, limit: int, now: float) -> list[str]:
        pool = await self._connections()
        if prefix is None:
            rows = await pool.fetch(
                f"SELECT DISTINCT namespace FROM {self._memories} "
                "WHERE expires_at IS NULL OR expires_at > $1 ORDER BY namespace LIMIT $2",
                now,
                limit,
            )
        else:
            rows = await pool.fetch(
                f"SELECT DISTINCT namespace FROM {self._memories} "
                "WHERE (expires_at IS NULL OR expires_at > $1) "
                "AND (namespace = $3 OR starts_with(namespace, $4)) ORDER BY namespace LIMIT $2",
                now,
                limit,
                prefix,
                prefix + SEPARATOR,
            )
        return [row[0] for row in rows]

    async def search(self, which: Selection, vector: Any, exact: bool) -> list[tuple[Row, float]]:
        pool = await self._connections()
        query = _vector_text(vector)
        filters, params = _conditions(which.conditions, first=5)
        where = (
            f"FROM {self._memories} WHERE namespace = $2 "
            f"AND (expires_at IS NULL OR expires_at > $3){filters}"
        )
        if not exact:
            # the index, its candidates re-sorted (relaxed_order may return them a little out
            # of order)
            rows = await pool.fetch(
                f"WITH hits AS MATERIALIZED (SELECT {_COLUMNS}, embedding <=> $1::text::vector "
                f"AS distance {where} ORDER BY embedding <=> $1::text::vector LIMIT $4) "
                "SELECT * FROM hits ORDER BY distance",
                query,
                which.namespace,
                which.now,
                which.limit,
                *params,
            )
            if len(rows) == which.limit:
                return [(Row(*row[:-1]), 1.0 - row[-1]) for row in rows]
            self.exact_fallbacks += 1
        # exact: `+ 0` keeps the planner off the HNSW index (it serves `<=>` alone)
        rows = await pool.fetch(
            f"SELECT {_COLUMNS}, (embedding <=> $1::text::vector) + 0 AS distance {where} "
            "ORDER BY distance LIMIT $4",
            query,
            which.namespace,
            which.now,
            which.limit,
            *params,
        )
        return [(Row(*row[:-1]), 1.0 - row[-1]) for row in rows]

    async def forget(self, thread_id: str | None, user_id: str | None, prefix: str | None) -> int:
        where: list[str] = []
        params: list[Any] = []
        if thread_id is not None:
            params.append(thread_id)
            where.append(f"thread_id = ${len(params)}")
        if user_id is not None:
            params.append(user_id)
            where.append(f"user_id = ${len(params)}")
        if prefix is not None:
            params += [prefix, prefix + SEPARATOR]
            where.append(
                f"(namespace = ${len(params) - 1} OR starts_with(namespace, ${len(params)}))"
            )
        if not where:
            return 0
        pool = await self._connections()
        done = await pool.execute(
            f"DELETE FROM {self._memories} WHERE {' OR '.join(where)}", *params
        )
        return int(done.split()[-1])

    async def purge(self, now: float) -> int:
        pool = await self._connections()
        done = await pool.execute(f"DELETE FROM {self._memories} WHERE expires_at <= $1", now)
        return int(done.split()[-1])

    async def close(self) -> None:
        if self._pool is not None and self._pool_loop is not asyncio.get_running_loop():
            self._drop_pool()
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()


def _vector_text(vector: Any) -> str:
    """pgvector's text form of a vector (`[0.1,0.2,...]`), with float32's shortest digits."""
    values = np.asarray(vector, dtype=np.float32)
    return "[" + ",".join(repr(float(value)) for value in values.tolist()) + "]"


def _conditions(conditions: Sequence[Condition], *, first: int) -> tuple[str, list[Any]]:
    """SQL for metadata conditions (` AND (...)` each, jsonb containment) and their
    parameters, numbered from `$first`."""
    sql: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        options = []
        for value in condition.values:
            params.append(json.dumps({condition.name: value}))
            options.append(f"metadata @> ${first + len(params) - 1}::jsonb")
        sql.append(f" AND ({' OR '.join(options)})")
    return "".join(sql), params
