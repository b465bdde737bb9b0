"""A served AG-UI run on a thread store against one in memory (`app(network, store=...)`).

    python benchmarks/agui_store.py              # memory registry, MemoryStore, SQLite
    python benchmarks/agui_store.py --postgres   # also PostgreSQL (Debian's server, started here)

In process, through httpx's ASGI transport (no sockets: the figure is the server's work). A
one-agent network answering at once in text; the client keeps the conversation as an AG-UI
client does (its messages plus each answer) and sends it whole with every turn. Per backend:
TURNS turns on one thread (the thread grows), then NEW_THREADS first turns on fresh threads.
Figures: median and p90 milliseconds per request (the whole SSE response read), after one
warm-up pass. SQLite runs
with its default `synchronous=FULL` (an fsync per commit) and with `NORMAL`. One JSON line on
stdout, a Markdown table on stderr. Nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx
import structlog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents import Agent, ScriptedModel  # noqa: E402
from network import Network  # noqa: E402
from network.agui import app  # noqa: E402
from network.threads import MemoryStore, SQLStore  # noqa: E402

TURNS = 40
NEW_THREADS = 20


def network() -> Network:
    agent = Agent("scribe", model=ScriptedModel(lambda r: "noted"), output_key="last")
    return Network(
        "notes", agents=[agent], state_schema={"last": {"type": str}, "topic": {"type": str}}
    )


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(frame[6:]) for frame in text.split("\n\n") if frame.startswith("data: ")]


async def turn(http: httpx.AsyncClient, thread: str, run: str, messages: list[Any]) -> float:
    started = time.perf_counter()
    response = await http.post(
        "/", json={"threadId": thread, "runId": run, "messages": messages, "state": {}}
    )
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.text
    seen = events(response.text)
    assert seen[-1]["type"] == "RUN_FINISHED", seen[-1]
    answer = next(e for e in seen if e["type"] == "TEXT_MESSAGE_START")["messageId"]
    text = "".join(e["delta"] for e in seen if e["type"] == "TEXT_MESSAGE_CONTENT")
    messages.append({"id": answer, "role": "assistant", "content": text})
    return elapsed


async def measure(asgi: Any) -> dict[str, Any]:
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
        conversation: list[Any] = []
        growing = []
        for index in range(TURNS):
            conversation.append({"id": f"u{index}", "role": "user", "content": f"note {index}"})
            growing.append(await turn(http, "long", f"r{index}", conversation))
        fresh = []
        for index in range(NEW_THREADS):
            messages = [{"id": "u", "role": "user", "content": "hello"}]
            fresh.append(await turn(http, f"new-{index}", f"n{index}", messages))
    return {"growing": summary(growing[1:]), "new_thread": summary(fresh)}


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[int(len(ordered) * 0.9) - 1], 2),
    }


async def bench(postgres: str | None, folder: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    backends: list[tuple[str, Any]] = [
        ("memory registry (no store)", None),
        ("MemoryStore", MemoryStore()),
        ("SQLite, synchronous=FULL", SQLStore(str(folder / "full.db"))),
        ("SQLite, synchronous=NORMAL", SQLStore(str(folder / "n.db"), sqlite_synchronous="NORMAL")),
    ]
    if postgres is not None:
        backends.append(("PostgreSQL", SQLStore(postgres)))
    await measure(app(network(), store=MemoryStore()))  # warm up: imports, first decodes
    for name, store in backends:
        asgi = app(network()) if store is None else app(network(), store=store)
        results[name] = await measure(asgi)
        if store is not None:
            await store.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--postgres", action="store_true", help="also on a local PostgreSQL")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        url = None
        if args.postgres:
            from tests.network.threads.postgres import postgres_server

            url = stack.enter_context(postgres_server())
        results = anyio.run(bench, url, Path(folder))
    print(json.dumps(results))
    print(
        f"\n| backend | turn on a {TURNS}-turn thread: median (p90) | first turn of a thread |",
        file=sys.stderr,
    )
    print("| --- | --- | --- |", file=sys.stderr)
    for name, figures in results.items():
        grow, new = figures["growing"], figures["new_thread"]
        print(
            f"| {name} | {grow['median_ms']} ms ({grow['p90_ms']}) | "
            f"{new['median_ms']} ms ({new['p90_ms']}) |",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
