"""Memories in an SQLite file: `sqlite-vec`'s `vec0` index where the Python can load it,
else exact search with numpy.

Python's own `sqlite3` cannot load extensions in many builds (pyenv's, here), so the store
connects through `sqlean` (the `sqlean-py` wheel: SQLite with extension loading on) when it is
installed and loads `sqlite_vec` into it; otherwise through `sqlite3`, keeping each vector in
the row and comparing the query with every row of the namespace. Which of the two a file uses
is decided when its tables are made and recorded with them: a file made with the index
needs sqlite-vec to be opened (a `ConfigurationError` says so).

The index: one `vec0` table with the namespace as its partition key and cosine distance, its
rowid the memory's id. A search without filters is a KNN query on the namespace's partition
(`vec0` compares with every vector of the partition: the results are exact); a search with
metadata filters computes `vec_distance_cosine` over the rows the filters select, on the vector
each row keeps beside the index (files made before rows kept it read it from the index), also
exact.
Expired rows are skipped, asking the index for more until `limit` are found or none are left.

The connection is used from one worker thread at a time (an anyio lock); writes take
SQLite's write lock up front (`BEGIN IMMEDIATE`), in WAL mode with `busy_timeout`, so several
processes may share the file, as with the thread store.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio
import numpy as np

from network.errors import ConfigurationError
from network.memory._backend import Row, Selection
from network.memory._checks import SEPARATOR, Condition

__all__ = ["SQLiteBackend", "vector_extension_available"]

T = TypeVar("T")
_COLUMNS = (
    "namespace, key, value, text, metadata, created_at, updated_at, expires_at, thread_id, user_id"
)


def _connect_module(want_index: bool | None) -> tuple[Any, bool]:
    """The DB-API module to connect with, and whether sqlite-vec loads into it."""
    if want_index is False:
        return sqlite3, False
    try:
        import sqlean  # noqa: PLC0415 (optional: the memory extra)
        import sqlite_vec  # noqa: PLC0415, F401
    except ImportError:
        if want_index:
            raise ConfigurationError(
                "the SQLite vector index needs the sqlean-py and sqlite-vec packages: "
                "pip install 'agent-network[memory]'"
            ) from None
        return sqlite3, False
    return sqlean, True


def vector_extension_available() -> bool:
    """Whether this Python can load sqlite-vec (through sqlean-py)."""
    try:
        return _connect_module(None)[1]
    except ConfigurationError:
        return False


class SQLiteBackend:
    """The `Backend` of `Memories("path.db")` (see the module docstring)."""

    kind = "sqlite"

    def __init__(
        self,
        path: str,
        *,
        table_prefix: str = "agent_network_",
        vector_index: bool | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        self.path = path
        self._module, self._can_index = _connect_module(vector_index)
        self._refused_index = vector_index is False  # the caller's choice, not a missing package
        self._memories = f"{table_prefix}memories"
        self._vectors = f"{table_prefix}memory_vectors"
        self._meta = f"{table_prefix}memory_meta"
        self._busy = busy_timeout
        self._conn: Any = None
        self._lock = anyio.Lock()
        self.indexed = False  # decided by setup: the file's own choice
        # Whether each row keeps its vector beside the index (files made since the filtered
        # search reads them there); decided by setup, like `indexed`.
        self._row_vectors = True

    # -- the connection ------------------------------------------------------------------

    def _open(self) -> Any:
        if self._conn is None:
            folder = os.path.dirname(self.path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            conn = self._module.connect(
                self.path, timeout=self._busy, check_same_thread=False, isolation_level=None
            )
            if self._can_index:
                import sqlite_vec  # noqa: PLC0415 (optional: the memory extra)

                conn.enable_load_extension(True)
                sqlite_vec.load(conn)
                conn.enable_load_extension(False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            self._conn = conn
        return self._conn

    async def _run(self, work: Callable[[Any], T]) -> T:
        async with self._lock:
            return await anyio.to_thread.run_sync(lambda: work(self._open()))

    async def _write(self, work: Callable[[Any], T]) -> T:
        def transaction(conn: Any) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                done = work(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return done

        return await self._run(transaction)

    # -- setup ---------------------------------------------------------------------------

    async def setup(self, embedder: str, dimensions: int) -> None:
        self.indexed = await self._write(lambda conn: self._setup(conn, embedder, dimensions))

    def _setup(self, conn: Any, embedder: str, dimensions: int) -> bool:
        m, meta = self._memories, self._meta
        conn.execute(f"CREATE TABLE IF NOT EXISTS {meta} (name TEXT PRIMARY KEY, value TEXT)")
        stored = dict(conn.execute(f"SELECT name, value FROM {meta}").fetchall())
        if stored:
            if (stored.get("embedder"), stored.get("dimensions")) != (embedder, str(dimensions)):
                raise ConfigurationError(
                    f"the memories in {self.path} were embedded by {stored.get('embedder')} "
                    f"({stored.get('dimensions')} dimensions), not {embedder} ({dimensions}): "
                    "vectors of two models do not compare; use another file or table_prefix"
                )
            indexed = stored.get("index") == "sqlite-vec"
            self._row_vectors = not indexed or stored.get("row_vectors") == "1"
            if indexed and self._refused_index:  # "install sqlean-py" was no answer to it
                raise ConfigurationError(
                    f"{self.path} keeps its memories' vectors in a sqlite-vec index, which "
                    "vector_index=False does not use: open it with vector_index=None or True, "
                    "or keep the memories in another file"
                )
            if indexed and not self._can_index:
                raise ConfigurationError(
                    f"{self.path} keeps its memories' vectors in a sqlite-vec index: install "
                    "sqlean-py and sqlite-vec (pip install 'agent-network[memory]') to open it"
                )
            return indexed
        indexed = self._can_index
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {m} (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, "
            "key TEXT NOT NULL, value TEXT NOT NULL, text TEXT NOT NULL, metadata TEXT NOT NULL, "
            "created_at REAL NOT NULL, updated_at REAL NOT NULL, expires_at REAL, "
            "thread_id TEXT, user_id TEXT, vector BLOB, UNIQUE (namespace, key))"
        )
        conn.execute(f"CREATE INDEX IF NOT EXISTS {m}_updated ON {m} (namespace, updated_at)")
        conn.execute(f"CREATE INDEX IF NOT EXISTS {m}_thread ON {m} (thread_id)")
        conn.execute(f"CREATE INDEX IF NOT EXISTS {m}_user ON {m} (user_id)")
        conn.execute(f"CREATE INDEX IF NOT EXISTS {m}_expires ON {m} (expires_at)")
        if indexed:
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._vectors} USING vec0("
                f"namespace TEXT PARTITION KEY, embedding float[{dimensions}] "
                "distance_metric=cosine)"
            )
        conn.executemany(
            f"INSERT INTO {meta} (name, value) VALUES (?, ?)",
            [
                ("embedder", embedder),
                ("dimensions", str(dimensions)),
                ("index", "sqlite-vec" if indexed else "exact"),
                ("row_vectors", "1"),
            ],
        )
        return indexed

    # -- writes --------------------------------------------------------------------------

    async def upsert(self, rows: Sequence[Row]) -> None:
        await self._write(lambda conn: self._upsert(conn, rows))

    def _upsert(self, conn: Any, rows: Sequence[Row]) -> None:
        m = self._memories
        for row in rows:
            blob = np.asarray(row.vector, dtype=np.float32).tobytes()
            found = conn.execute(
                f"SELECT id, created_at FROM {m} WHERE namespace = ? AND key = ?",
                (row.namespace, row.key),
            ).fetchone()
            values = (
                row.value, row.text, row.metadata, row.updated_at, row.expires_at,
                row.thread_id, row.user_id, blob if self._row_vectors else None,
            )  # fmt: skip
            if found is None:
                cursor = conn.execute(
                    f"INSERT INTO {m} (namespace, key, created_at, value, text, metadata, "
                    "updated_at, expires_at, thread_id, user_id, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (row.namespace, row.key, row.created_at, *values),
                )
                ident = cursor.lastrowid
            else:
                ident, row.created_at = found  # the item handed back keeps it too
                conn.execute(
                    f"UPDATE {m} SET value = ?, text = ?, metadata = ?, updated_at = ?, "
                    "expires_at = ?, thread_id = ?, user_id = ?, vector = ? WHERE id = ?",
                    (*values, ident),
                )
            if self.indexed:
                if found is not None:
                    conn.execute(f"DELETE FROM {self._vectors} WHERE rowid = ?", (ident,))
                conn.execute(
                    f"INSERT INTO {self._vectors} (rowid, namespace, embedding) VALUES (?, ?, ?)",
                    (ident, row.namespace, blob),
                )

    async def delete(self, namespace: str, key: str) -> bool:
        def work(conn: Any) -> bool:
            found = conn.execute(
                f"SELECT id FROM {self._memories} WHERE namespace = ? AND key = ?",
                (namespace, key),
            ).fetchone()
            if found is None:
                return False
            self._remove(conn, [found[0]])
            return True

        return await self._write(work)

    def _remove(self, conn: Any, ids: Sequence[int]) -> None:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            conn.execute(f"DELETE FROM {self._memories} WHERE id IN ({marks})", chunk)
            if self.indexed:
                conn.execute(f"DELETE FROM {self._vectors} WHERE rowid IN ({marks})", chunk)

    async def forget(self, thread_id: str | None, user_id: str | None, prefix: str | None) -> int:
        where: list[str] = []
        params: list[Any] = []
        if thread_id is not None:
            where.append("thread_id = ?")
            params.append(thread_id)
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        if prefix is not None:
            where.append("(namespace = ? OR substr(namespace, 1, ?) = ?)")
            params += [prefix, len(prefix) + 1, prefix + SEPARATOR]
        if not where:
            return 0

        def work(conn: Any) -> int:
            ids = [
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM {self._memories} WHERE {' OR '.join(where)}", params
                )
            ]
            self._remove(conn, ids)
            return len(ids)

        return await self._write(work)

    async def purge(self, now: float) -> int:
        def work(conn: Any) -> int:
            ids = [
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM {self._memories} WHERE expires_at <= ?", (now,)
                )
            ]
            self._remove(conn, ids)
            return len(ids)

        return await self._write(work)

    # -- reads ---------------------------------------------------------------------------

    async def get(self, namespace: str, key: str, now: float) -> Row | None:
        def work(conn: Any) -> Row | None:
            found = conn.execute(
                f"SELECT {_COLUMNS} FROM {self._memories} WHERE namespace = ? AND key = ? "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (namespace, key, now),
            ).fetchone()
            return None if found is None else Row(*found)

        return await self._run(work)

    async def listing(self, which: Selection, offset: int) -> list[Row]:
        filters, params = _conditions(which.conditions)

        def work(conn: Any) -> list[Row]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM {self._memories} WHERE namespace = ? "
                f"AND (expires_at IS NULL OR expires_at > ?){filters} "
                "ORDER BY updated_at DESC, key LIMIT ? OFFSET ?",
                (which.namespace, which.now, *params, which.limit, offset),
            ).fetchall()
            return [Row(*row) for row in rows]

        return await self._run(work)

    async def namespaces(self, prefix: str | None, limit: int, now: float) -> list[str]:
        under = ""
        params: list[Any] = []
        if prefix is not None:
            under = " AND (namespace = ? OR substr(namespace, 1, ?) = ?)"
            params = [prefix, len(prefix) + 1, prefix + SEPARATOR]

        def work(conn: Any) -> list[str]:
            rows = conn.execute(
                f"SELECT DISTINCT namespace FROM {self._memories} "
                f"WHERE (expires_at IS NULL OR expires_at > ?){under} ORDER BY namespace LIMIT ?",
                (now, *params, limit),
            ).fetchall()
            return [row[0] for row in rows]

        return await self._run(work)

    async def search(self, which: Selection, vector: Any, exact: bool) -> list[tuple[Row, float]]:
        query = np.asarray(vector, dtype=np.float32)
        if not self.indexed:
            return await self._run(lambda conn: self._scan(conn, which, query))
        if which.conditions or exact:
            return await self._run(lambda conn: self._filtered(conn, which, query))
        return await self._run(lambda conn: self._nearest(conn, which, query))

    def _nearest(self, conn: Any, which: Selection, query: Any) -> list[tuple[Row, float]]:
        """KNN on the namespace's partition (no conditions); more asked while expired rows
        take places."""
        k = limit = which.limit
        while True:
            hits = conn.execute(
                f"SELECT rowid, distance FROM {self._vectors} WHERE embedding MATCH ? "
                "AND k = ? AND namespace = ? ORDER BY distance",
                (query.tobytes(), k, which.namespace),
            ).fetchall()
            found = self._rows_by_id(conn, [hit[0] for hit in hits], which.now)
            ranked = [(found[i], 1.0 - d) for i, d in hits if i in found]
            if len(ranked) >= limit or len(hits) < k:
                return ranked[:limit]
            if k >= 4096:  # vec0's largest k: the rest compared row by row
                return self._filtered(conn, which, query)
            k = min(k * 4, 4096)

    def _filtered(self, conn: Any, which: Selection, query: Any) -> list[tuple[Row, float]]:
        """Exact: the distance to every row the filters select, computed on the vector kept
        in the row (reading each from the `vec0` table by rowid cost 6x more); on a file made
        before rows kept their vectors, on the index's, joined by rowid."""
        if self._row_vectors:
            alias, vector, source = "", "vector", self._memories
        else:
            alias, vector = "m.", "v.embedding"
            source = f"{self._memories} m JOIN {self._vectors} v ON v.rowid = m.id"
        filters, params = _conditions(which.conditions, alias)
        columns = ", ".join(f"{alias}{name.strip()}" for name in _COLUMNS.split(","))
        rows = conn.execute(
            f"SELECT {columns}, vec_distance_cosine({vector}, ?) AS d FROM {source} "
            f"WHERE {alias}namespace = ? "
            f"AND ({alias}expires_at IS NULL OR {alias}expires_at > ?){filters} "
            "ORDER BY d LIMIT ?",
            (query.tobytes(), which.namespace, which.now, *params, which.limit),
        ).fetchall()
        return [(Row(*row[:-1]), 1.0 - row[-1]) for row in rows]

    def _scan(self, conn: Any, which: Selection, query: Any) -> list[tuple[Row, float]]:
        """Exact, without the extension: every selected row's vector, compared with numpy."""
        filters, params = _conditions(which.conditions)
        rows = conn.execute(
            f"SELECT id, vector FROM {self._memories} WHERE namespace = ? "
            f"AND (expires_at IS NULL OR expires_at > ?){filters}",
            (which.namespace, which.now, *params),
        ).fetchall()
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32)
        scores = matrix.reshape(len(rows), -1) @ query
        best = np.argsort(-scores, kind="stable")[: which.limit]
        found = self._rows_by_id(conn, [rows[at][0] for at in best], which.now)
        return [(found[rows[at][0]], float(scores[at])) for at in best]

    def _rows_by_id(self, conn: Any, ids: Sequence[int], now: float) -> dict[int, Row]:
        found: dict[int, Row] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT id, {_COLUMNS} FROM {self._memories} WHERE id IN ({marks}) "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (*chunk, now),
            ):
                found[row[0]] = Row(*row[1:])
        return found

    async def close(self) -> None:
        async with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()


def _conditions(conditions: Sequence[Condition], alias: str = "") -> tuple[str, list[Any]]:
    """SQL for metadata conditions (` AND (...)` each) and their parameters.

    Names are identifiers (checked), so they are safe in a JSON path; a bool is matched by
    its JSON type, since `json_extract` reads `true` as 1."""
    sql: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        path = f"'$.{condition.name}'"
        kind = f"json_type({alias}metadata, {path})"
        options = []
        for value in condition.values:
            if value is None:
                options.append(f"{kind} = 'null'")
            elif isinstance(value, bool):
                options.append(f"{kind} = '{'true' if value else 'false'}'")
            elif isinstance(value, int | float):
                options.append(
                    f"({kind} IN ('integer', 'real') AND json_extract({alias}metadata, {path}) = ?)"
                )
                params.append(value)
            else:
                options.append(f"({kind} = 'text' AND json_extract({alias}metadata, {path}) = ?)")
                params.append(value)
        sql.append(f" AND ({' OR '.join(options)})")
    return "".join(sql), params
