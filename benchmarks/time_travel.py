"""Time travel on a long thread: listing checkpoints, `state_at`, fork and rewind (issue 30).

A thread of N agent calls (default 10,000) is built through the store API, one commit per
call as runs make them: each call adds 3 messages and writes the thread key `turn`, every 10th
also appends to the list `notes`, every 100th writes the shared key `user:seen`. Then, in
milliseconds (medians over the repeats, wall time):

- `checkpoints`: listing all N checkpoints;
- `state_at warm`: the thread at a random checkpoint, from a store whose cache holds the thread
  (a long-lived server); `state_at cold`: the same from a fresh store with an empty cache,
  which fetches the thread's rows up to the checkpoint (nothing is decoded until read; in this
  process, its imports warm: `state_at_cold.py` measures it in new processes);
- `state_at state only`: of that, the keys' values alone (the key-history read);
- `fork middle` / `fork end`: forking at checkpoint N/2 and N-1 (a new thread each time);
- `rewind middle`: rewinding a fresh fork of the whole thread to checkpoint N/2;
- `commit` vs `commit, no checkpoint`: one agent call's commit on the long thread, with the
  checkpoint's rows recorded, and with that recording switched off (what it costs).

    python benchmarks/time_travel.py [--calls N] [--repeats R] [--postgres-url URL] [--no-postgres]

Stores: MemoryStore, SQLite (a temporary file, synchronous=NORMAL while building, FULL while
measuring commits) and PostgreSQL (started as the tests start theirs unless a URL is given).
One JSON line on stdout; a Markdown table on stderr. Figures are not asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import anyio  # noqa: E402

from network.history.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage  # noqa: E402
from network.history.results import InferenceResult, ToolCallRecord  # noqa: E402
from network.state.handlers import replace_values  # noqa: E402
from network.state.schema import build_spec  # noqa: E402
from network.threads import Commit, ResultRecord, SharedWrite  # noqa: E402
from network.threads.thread_data import encode_value  # noqa: E402

_SPEC = build_spec("user:seen", int, None)


def one_call(n: int, revision: int) -> Commit:
    """The commit of call `n`: 3 messages, the key `turn`, sometimes `notes` and `user:seen`."""
    question = UserMessage(f"question {n}")
    call = ToolCall(f"call_{n}", "lookup", {"n": n})
    output = AssistantMessage(None, [call], name="a")
    record = ToolCallRecord(call.id, "lookup", {"n": n}, "ok", "ok")
    result = InferenceResult("a", question.content, [], [], [output], [record], None)
    result.started_at = time.time()
    state = {"turn": encode_value(n)}
    if n % 10 == 0:
        state["notes"] = encode_value([f"note {i}" for i in range(0, n + 1, 10)][-50:])
    shared = [SharedWrite("user:seen", n, replace_values, _SPEC)] if n % 100 == 0 else []
    return Commit(
        revision=revision,
        run_id=f"run_{n}",
        messages=[question, output, ToolMessage(call.id, "ok", "lookup")],
        results=[ResultRecord(result, 3 * n + 1)],
        state=state,
        shared=shared,
    )


async def build(store: Any, thread_id: str, calls: int) -> int:
    await store.create_thread(thread_id, app_name="bench", user_id="u")
    revision = 0
    for n in range(calls):
        revision = await store.append_results(thread_id, one_call(n, revision))
    return revision


async def median_ms(repeats: int, action: Callable[[], Awaitable[Any]]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        await action()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


async def measure(make: Callable[[], Any], calls: int, repeats: int) -> dict[str, float]:
    from network.threads import DecodedCache, SQLStore
    from network.threads.sql_timeline import TimelineWriter

    store = make()
    figures: dict[str, float] = {}
    revision = await build(store, "long", calls)
    await store.get_thread("long")  # a server that has read the thread once
    picks = random.Random(1)
    figures["checkpoints"] = await median_ms(repeats, lambda: store.checkpoints("long"))
    figures["state_at warm"] = await median_ms(
        repeats, lambda: store.state_at("long", picks.randrange(calls))
    )
    if isinstance(store, SQLStore):

        async def cold() -> None:
            fresh = SQLStore(
                store.url,
                cache=DecodedCache(),
                create_tables=False,
                table_prefix=store.tables.threads.name.removesuffix("threads"),
            )
            async with fresh:
                await fresh.state_at("long", picks.randrange(calls))

        async def state_only() -> None:
            async with store._reader.begin() as conn:
                await store._state_rows(conn, "long", picks.randrange(revision))

        figures["state_at cold"] = await median_ms(repeats, cold)
        figures["state_at state only"] = await median_ms(repeats, state_only)
    forks = iter(range(10**6))
    figures["fork middle"] = await median_ms(
        repeats,
        lambda: store.fork_thread("long", at=calls // 2, new_thread_id=f"m{next(forks)}"),
    )
    figures["fork end"] = await median_ms(
        repeats, lambda: store.fork_thread("long", at=-1, new_thread_id=f"e{next(forks)}")
    )
    rewinds = []
    for n in range(repeats):
        await store.fork_thread("long", at=-1, new_thread_id=f"r{n}")
        start = time.perf_counter()
        await store.rewind_thread(f"r{n}", to=calls // 2, kept_as=f"k{n}")
        rewinds.append((time.perf_counter() - start) * 1000)
    figures["rewind middle"] = round(statistics.median(rewinds), 3)

    async def commit() -> float:
        nonlocal revision
        start = time.perf_counter()
        revision = await store.append_results("long", one_call(calls, revision))
        return (time.perf_counter() - start) * 1000

    if isinstance(store, SQLStore):  # with and without the checkpoint's rows, alternating
        original = TimelineWriter.record

        async def skip(*_args: Any, **_kwargs: Any) -> None:
            return None

        with_rows, without = [], []
        for _ in range(repeats * 3):
            with_rows.append(await commit())
            TimelineWriter.record = skip  # type: ignore[method-assign]
            try:
                without.append(await commit())
            finally:
                TimelineWriter.record = original  # type: ignore[method-assign]
        figures["commit"] = round(statistics.median(with_rows), 3)
        figures["commit, no checkpoint"] = round(statistics.median(without), 3)
    else:
        figures["commit"] = round(statistics.median([await commit() for _ in range(repeats)]), 3)
    await store.close()
    print(json.dumps(figures), file=sys.stderr)  # as each store finishes
    return figures


async def main_async(options: argparse.Namespace, postgres_url: str | None) -> dict[str, Any]:
    from network.threads import MemoryStore, SQLStore

    results: dict[str, Any] = {"calls": options.calls, "repeats": options.repeats}
    results["memory"] = await measure(MemoryStore, options.calls, options.repeats)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "threads.db"
        results["sqlite"] = await measure(
            lambda: SQLStore(str(path), sqlite_synchronous="NORMAL"),
            options.calls,
            options.repeats,
        )
    if postgres_url is not None:
        prefix = f"bench{int(time.time())}_"
        results["postgres"] = await measure(
            lambda: SQLStore(postgres_url, table_prefix=prefix), options.calls, options.repeats
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--postgres-url", help="a PostgreSQL server to use (else one is started)")
    parser.add_argument("--no-postgres", action="store_true")
    options = parser.parse_args()
    # Stopped with SIGTERM, leave through the `with` below so the PostgreSQL it started stops.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with ExitStack() as stack:
        url = options.postgres_url
        if url is None and not options.no_postgres:
            from tests.network.threads.postgres import postgres_server

            url = stack.enter_context(postgres_server())
        results = anyio.run(main_async, options, url)
    print(json.dumps(results))
    stores = [name for name in ("memory", "sqlite", "postgres") if name in results]
    print(f"\n{options.calls:,}-call thread, ms (median of {options.repeats})", file=sys.stderr)
    print("| | " + " | ".join(stores) + " |", file=sys.stderr)
    print("|---" * (len(stores) + 1) + "|", file=sys.stderr)
    order = list(results["sqlite"])  # the most rows
    for row in order:
        cells = [str(results[name].get(row, "")) for name in stores]
        print(f"| {row} | " + " | ".join(cells) + " |", file=sys.stderr)


if __name__ == "__main__":
    main()
