"""The pages a stored run writes on SQLite, b-tree by b-tree (load-proof: counts, not times).

    python benchmarks/wal_frames.py [--runs N] [--warmup N] [--threads N] [--library PATH]

`stored_run.py`'s three-call run on a SQLite file (`synchronous=FULL`), `--warmup` runs, then
`--runs` measured ones, one at a time, rotating over `--threads` threads (so the tables hold
several threads' rows, as a server's do). Before each measured run the WAL is emptied
(`PRAGMA wal_checkpoint(TRUNCATE)`); after it, each frame of the `-wal` file (a page the run
wrote: two `pwrite`s, and its share of the fsync) is named by the b-tree that page belongs to,
through SQLite's `dbstat` table. Prints the frames a run per b-tree, and per commit of the run
(a commit's last frame carries the database's size). `--library`: another checkout to measure
(its `network` imported instead of this one's). Nothing is asserted.
"""

import argparse
import collections
import logging
import sqlite3
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def frames(wal: Path) -> list[tuple[int, bool]]:
    """(page number, ends a commit) of each valid frame of the WAL file `wal`."""
    data = wal.read_bytes()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    found = []
    offset = 32
    while offset + 24 + page_size <= len(data):
        page, size_after = struct.unpack(">II", data[offset : offset + 8])
        if data[offset + 8 : offset + 16] != salts:  # left from before the WAL restarted
            break
        found.append((page, size_after != 0))
        offset += 24 + page_size
    return found


def owners(database: Path) -> dict[int, str]:
    """Each page's b-tree (table or index name; `sqlite_schema` for page 1)."""
    connection = sqlite3.connect(database)
    try:
        return {page: name for name, page in connection.execute("SELECT name, pageno FROM dbstat")}
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=80)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--library", default=str(HERE.parent))
    args = parser.parse_args()
    sys.path.insert(0, args.library)

    import anyio
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    from stored_run import three_calls

    from network import ThreadRef
    from network.threads import SQLStore

    network = three_calls()
    database = Path(tempfile.mkdtemp()) / "frames.db"
    by_tree: collections.Counter[str] = collections.Counter()
    by_commit: collections.Counter[int] = collections.Counter()

    async def run(store: Any, index: int) -> None:
        thread = ThreadRef(f"t{index % args.threads}", store=store)
        result = await network.run(f"go {index}", thread=thread)
        assert result.output == "done"

    async def measure() -> None:
        store = SQLStore(f"sqlite+aiosqlite:///{database}")
        for index in range(args.warmup):
            await run(store, index)
        for index in range(args.warmup, args.warmup + args.runs):
            emptying = sqlite3.connect(database)
            emptying.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            emptying.close()
            await run(store, index)
            named = owners(database)
            commit = 0
            for page, ends in frames(Path(f"{database}-wal")):
                by_tree[named.get(page, f"page {page} (freed)")] += 1
                by_commit[commit] += 1
                commit += ends
        await store.close()

    anyio.run(measure)
    total = sum(by_tree.values()) / args.runs
    print(f"WAL frames a run: {total:.2f} ({args.library})")
    print("by commit: " + ", ".join(f"{n / args.runs:.2f}" for _, n in sorted(by_commit.items())))
    for name, count in by_tree.most_common():
        print(f"  {count / args.runs:6.2f}  {name}")


if __name__ == "__main__":
    main()
