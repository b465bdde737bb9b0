"""Long-term memory stores: put and search latency, and recall@10, against LangGraph's stores.

The same data and the same embedder on both sides: N memories (N = 1k, 10k, 100k) of
`TENANTS` users, each a short sentence with a `kind` (one of four), embedded once by our
offline embedder (WordLlama, 256 dimensions) and handed to both stores through a lookup table,
so the figures are the stores' own (embedding costs the same for both; its cost is printed
apart). A query asks for one user's memories of one kind (about 2.5% of the table) by
meaning, `limit` 10; recall@10 is measured against exact search with numpy on the same
vectors.

Ours: `Memories` in memory, SQLite (sqlite-vec, and exact), PostgreSQL (pgvector HNSW with
iterative scan). LangGraph (benchmarks/peers/langgraph_memory_bench.py, in
benchmarks/.venv-peers): `InMemoryStore`, `SqliteStore`, `PostgresStore` (pgvector HNSW), each
with the same vectors. PostgreSQL is the pgvector server of the memory tests
(tests/network/memory/pgvector.py), one database per framework.

    python benchmarks/memory_store.py --sizes 1000,10000 --queries 50
    python benchmarks/memory_store.py --sizes 1000 --only ours

Prints one table row per (framework, backend, size): put (µs per memory, batches of 500),
one put (ms, median of 30), search (ms, median), recall@10.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
import numpy as np

from tests.network.memory.test_recall import WORDS

HERE = Path(__file__).resolve().parent
PEERS = HERE / ".venv-peers" / "bin" / "python"
TENANTS = 10
KINDS = ("taste", "fact", "plan", "person")


def dataset(size: int, queries: int, folder: Path) -> Path:
    """Write the items, the queries and their vectors (one embedder, once) to `folder`."""
    from network.memory import WordLlamaEmbedder

    rng = random.Random(size)
    items = [
        {
            "tenant": f"u{i % TENANTS}",
            "key": f"m{i}",
            "text": "the user likes " + " ".join(rng.sample(WORDS, 4)) + f" ({i})",
            "kind": KINDS[(i // TENANTS) % len(KINDS)],
        }
        for i in range(size)
    ]
    asks = [
        {
            "tenant": f"u{rng.randrange(TENANTS)}",
            "text": " ".join(rng.sample(WORDS, 3)),
            "kind": rng.choice(KINDS),
        }
        for _ in range(queries)
    ]
    embedder = WordLlamaEmbedder()
    started = time.perf_counter()
    vectors = np.asarray(
        anyio.run(embedder.embed, [item["text"] for item in items] + [q["text"] for q in asks]),
        dtype=np.float32,
    )
    took = time.perf_counter() - started
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    truth = []
    item_vectors = vectors[: len(items)]
    for at, ask in enumerate(asks):
        chosen = [
            i for i, item in enumerate(items)
            if item["tenant"] == ask["tenant"] and item["kind"] == ask["kind"]
        ]  # fmt: skip
        scores = item_vectors[chosen] @ vectors[len(items) + at]
        truth.append([items[chosen[j]]["key"] for j in np.argsort(-scores)[:10]])
    path = folder / f"data-{size}.json"
    path.write_text(
        json.dumps(
            {
                "items": items,
                "queries": asks,
                "truth": truth,
                "vectors": vectors.round(6).tolist(),
                "embed_us_per_text": took / len(vectors) * 1e6,
            }
        )
    )
    return path


class TableEmbedder:
    """The dataset's vectors, looked up by text (the same vectors LangGraph is given)."""

    name = "wordllama/l2_supercat"
    dimensions = 256

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.table[text] for text in texts]


async def measure_ours(kind: str, store: Any, data: dict[str, Any], batch: int) -> dict[str, Any]:
    from network.memory import Memories, NewMemory

    items, asks = data["items"], data["queries"]
    texts = [item["text"] for item in items] + [ask["text"] for ask in asks]
    table = dict(zip(texts, data["vectors"], strict=True))
    options: dict[str, Any] = {"embedder": TableEmbedder(table)}
    if kind.startswith("sqlite"):
        options["vector_index"] = kind == "sqlite-vec"
    memories = Memories(store, **options)
    by_tenant: dict[str, list[Any]] = {}
    for item in items:
        by_tenant.setdefault(item["tenant"], []).append(item)
    started = time.perf_counter()
    for tenant, own in by_tenant.items():
        for at in range(0, len(own), batch):
            await memories.put_many(
                ("app", "users", tenant),
                [
                    NewMemory(item["key"], item["text"], metadata={"kind": item["kind"]})
                    for item in own[at : at + batch]
                ],
            )
    put_us = (time.perf_counter() - started) / len(items) * 1e6
    if kind == "postgresql":  # what autovacuum does a minute after a bulk load
        pool = await memories.backend._connections()  # type: ignore[attr-defined]
        await pool.execute(f"ANALYZE {memories.backend._memories}")  # type: ignore[attr-defined]
    one_put = []
    for at in range(30):
        item = items[at]
        began = time.perf_counter()
        await memories.put(("app", "users", item["tenant"]), item["key"], item["text"],
                           metadata={"kind": item["kind"]})  # fmt: skip
        one_put.append((time.perf_counter() - began) * 1e3)
    searches, hits = [], 0
    for ask, truth in zip(asks, data["truth"], strict=True):
        began = time.perf_counter()
        found = await memories.search(
            ("app", "users", ask["tenant"]), ask["text"], filter={"kind": ask["kind"]}, limit=10
        )
        searches.append((time.perf_counter() - began) * 1e3)
        hits += len({item.key for item in found} & set(truth))
    await memories.close()
    return {
        "framework": "agent-network",
        "backend": kind,
        "put_us_per_item": put_us,
        "one_put_ms": statistics.median(one_put),
        "search_ms": statistics.median(searches),
        "recall_at_10": hits / (10 * len(asks)),
    }


def row(result: dict[str, Any], size: int) -> str:
    return (
        f"| {result['framework']} | {result['backend']} | {size:,} | "
        f"{result['put_us_per_item']:.0f} | {result['one_put_ms']:.2f} | "
        f"{result['search_ms']:.2f} | {result['recall_at_10']:.3f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--backends", default="memory,sqlite-vec,sqlite-exact,postgresql")
    parser.add_argument("--only", choices=("ours", "langgraph"), default=None)
    args = parser.parse_args()
    backends = args.backends.split(",")
    from tests.network.memory.pgvector import pgvector_server

    print("| framework | backend | items | put µs/item | one put ms | search ms | recall@10 |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as folder, pgvector_server() as url:
        for size in [int(s) for s in args.sizes.split(",")]:
            path = dataset(size, args.queries, Path(folder))
            data = json.loads(path.read_text())
            print(f"<!-- embedding: {data['embed_us_per_text']:.0f} µs per text -->")
            if args.only != "langgraph":
                for kind in backends:
                    store = {
                        "memory": "memory://",
                        "sqlite-vec": str(Path(folder) / f"ours-{size}.db"),
                        "sqlite-exact": str(Path(folder) / f"ours-exact-{size}.db"),
                        "postgresql": url,
                    }[kind]
                    if kind == "postgresql":
                        store = _fresh_database(url, f"ours_{size}")
                    result = anyio.run(measure_ours, kind, store, data, args.batch)
                    print(row(result, size), flush=True)
            if args.only != "ours" and PEERS.exists():
                peer = [
                    str(PEERS), str(HERE / "peers" / "langgraph_memory_bench.py"),
                    "--data", str(path), "--folder", folder, "--batch", str(args.batch),
                    "--postgres-url", _fresh_database(url, f"langgraph_{size}").replace(
                        "postgresql+asyncpg://", "postgresql://"),
                    "--backends", ",".join(b for b in ("memory", "sqlite", "postgresql")
                                           if any(k.startswith(b) for k in backends)),
                ]  # fmt: skip
                done = subprocess.run(peer, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    print(f"<!-- langgraph failed: {done.stderr[-2000:]} -->")
                for line in done.stdout.splitlines():
                    print(row(json.loads(line), size), flush=True)


def _fresh_database(url: str, name: str) -> str:
    """A new database `name` on the server of `url` (with pgvector); its URL."""
    import asyncpg

    async def create() -> None:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await conn.execute(f"DROP DATABASE IF EXISTS {name}")
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()

    anyio.run(create)
    return url.rsplit("/", 1)[0] + f"/{name}"


if __name__ == "__main__":
    main()
