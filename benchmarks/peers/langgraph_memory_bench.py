"""LangGraph's long-term memory stores, for benchmarks/memory_store.py (runs in
benchmarks/.venv-peers).

`InMemoryStore`, `SqliteStore` and `PostgresStore` (pgvector HNSW), each given the dataset's
vectors through a lookup-table embedder (the same vectors our stores get), measured as ours
are: put (batches of `--batch` `PutOp`s of one namespace), one put (median of 30), search (one
user's namespace, a `kind` filter, limit 10; median) and recall@10 against the exact answer.
Prints one JSON line per store.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp


def measure(name: str, store: Any, data: dict[str, Any], batch: int) -> dict[str, Any]:
    items, asks = data["items"], data["queries"]
    by_tenant: dict[str, list[Any]] = {}
    for item in items:
        by_tenant.setdefault(item["tenant"], []).append(item)
    started = time.perf_counter()
    for tenant, own in by_tenant.items():
        for at in range(0, len(own), batch):
            store.batch(
                [
                    PutOp(("app", "users", tenant), item["key"],
                          {"text": item["text"], "kind": item["kind"]}, index=["text"])
                    for item in own[at : at + batch]
                ]
            )  # fmt: skip
    put_us = (time.perf_counter() - started) / len(items) * 1e6
    one_put = []
    for at in range(30):
        item = items[at]
        began = time.perf_counter()
        store.put(("app", "users", item["tenant"]), item["key"],
                  {"text": item["text"], "kind": item["kind"]}, index=["text"])  # fmt: skip
        one_put.append((time.perf_counter() - began) * 1e3)
    searches, hits = [], 0
    for ask, truth in zip(asks, data["truth"], strict=True):
        began = time.perf_counter()
        found = store.search(
            ("app", "users", ask["tenant"]), query=ask["text"], filter={"kind": ask["kind"]},
            limit=10,
        )  # fmt: skip
        searches.append((time.perf_counter() - began) * 1e3)
        hits += len({item.key for item in found} & set(truth))
    return {
        "framework": "langgraph",
        "backend": name,
        "put_us_per_item": put_us,
        "one_put_ms": statistics.median(one_put),
        "search_ms": statistics.median(searches),
        "recall_at_10": hits / (10 * len(asks)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--postgres-url", required=True)
    parser.add_argument("--backends", default="memory,sqlite,postgresql")
    args = parser.parse_args()
    data = json.loads(Path(args.data).read_text())
    texts = [item["text"] for item in data["items"]] + [q["text"] for q in data["queries"]]
    table = dict(zip(texts, data["vectors"], strict=True))

    def embed(batch: list[str]) -> list[list[float]]:
        return [table[text] if text in table else table[json.loads(text)["text"]] for text in batch]

    index: dict[str, Any] = {"dims": 256, "embed": embed, "fields": ["text"]}
    size = len(data["items"])
    backends = args.backends.split(",")
    if "memory" in backends:
        from langgraph.store.memory import InMemoryStore

        found = measure("memory", InMemoryStore(index=index), data, args.batch)
        print(json.dumps(found), flush=True)
    if "sqlite" in backends:
        from langgraph.store.sqlite import SqliteStore

        path = str(Path(args.folder) / f"langgraph-{size}.db")
        # `from_conn_string` connects with sqlite3, which cannot load sqlite-vec on this
        # Python (its setup fails on `enable_load_extension`): the same connection, made
        # with sqlean (SQLite with extension loading), as for our store
        import sqlean

        conn = sqlean.connect(path, check_same_thread=False, isolation_level=None)
        try:
            store = SqliteStore(conn, index=index)
            store.setup()
            print(json.dumps(measure("sqlite", store, data, args.batch)), flush=True)
        finally:
            conn.close()
    if "postgresql" in backends:
        from langgraph.store.postgres import PostgresStore

        pg_index = {**index, "ann_index_config": {"kind": "hnsw"}, "distance_type": "cosine"}
        with PostgresStore.from_conn_string(args.postgres_url, index=pg_index) as store:
            store.setup()
            print(json.dumps(measure("postgresql", store, data, args.batch)), flush=True)


if __name__ == "__main__":
    main()
