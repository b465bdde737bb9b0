"""What one core drives: model calls per second over HTTP, with 1, 100 and 1,000 runs in flight.

A W2 over HTTP: C runs of 10 steps start at once, each step one model call to the local fake
OpenAI server (benchmarks/fake_openai_server.py, its own process, answering at once), batch
after batch for about a second. Each (contender, C) runs in a fresh process, and the
contenders take turns round after round, so each sees the same load. Figures per contender and
C, medians over the rounds: calls completed per second (wall), the client process's CPU per
call, and memory per run in flight (peak RSS above the RSS before the timed batches, over C).

Contenders: agent-network (the native client, `OpenAIModel`), the bare floor loops on aiohttp
and on httpx (benchmarks/floor.py), and AgentKit on Node when benchmarks/setup_peers.sh
installed it. The server is one Python process on a core of its own at best: at 100 and 1,000
in flight it, not the client, may set the pace; the client's CPU per call is the figure that
says what one core of the client drives (1e6 / CPU µs per call = calls per second per core).

The cost per streamed chunk: the µs to read one SSE event and turn it into a delta through the
native client's stream reader (`openai_stream.ChatStream` into a `StreamedAnswer` with a
consumer), against a bare loop that only splits the lines and `json.loads` each chunk; both
from memory, no socket.

    python benchmarks/one_core.py [--rounds 3] [--in-flight 1,100,1000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, os.environ.get("AGENT_NETWORK_SOURCE") or str(HERE.parent))

from bench_common import reset_peak_rss  # noqa: E402
from fake_openai_server import FakeOpenAIServer  # noqa: E402

STEPS = 10
AGENTKIT = HERE / "peers" / "agentkit" / "agentkit_bench.mjs"
CONTENDERS = ("agent-network", "floor-aiohttp", "floor-httpx", "agentkit")


def _run_for(contender: str, base_url: str):
    if contender == "agent-network":
        import ours_bench

        from agents.models.openai_native import OpenAIModel

        return ours_bench.make_run(OpenAIModel("openai/fake", api_base=base_url))
    import floor

    return floor.make_http_run(base_url, transport=contender.removeprefix("floor-"))


async def _child(contender: str, base_url: str, in_flight: int) -> dict:
    run = _run_for(contender, base_url)

    async def batch() -> None:
        done = await asyncio.gather(*(run(STEPS) for _ in range(in_flight)))
        assert all(got == STEPS for got in done), done

    assert await run(STEPS) == STEPS  # warm: imports, caches, a first connection
    gc.collect()
    rss0 = _rss()  # before the runs in flight: what they take is counted
    reset_peak_rss()
    cpu0, t0 = time.process_time(), time.perf_counter()
    calls = 0
    while True:
        await batch()
        calls += in_flight * STEPS
        if time.perf_counter() - t0 >= 1.0:
            break
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"calls": calls, "wall_s": wall, "cpu_s": cpu, "mem_bytes": max(0, peak - rss0)}


def _rss() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _measure(contender: str, base_url: str, in_flight: int) -> dict | None:
    if contender == "agentkit":
        node = shutil.which("node")
        if node is None or not (AGENTKIT.parent / "node_modules").exists():
            return None
        cmd = [node, "--expose-gc", str(AGENTKIT), "--one-core", str(in_flight)]
        cmd += ["--base-url", base_url]
    else:
        cmd = [sys.executable, __file__, "--child", contender, "--in-flight", str(in_flight)]
        cmd += ["--base-url", base_url]
    done = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        print(f"   {contender} C={in_flight} failed", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the cost per streamed chunk --------------------------------------------------------------


def _sse_lines(events: int) -> list[bytes]:
    lines = []
    for k in range(events):
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "fake",
            "choices": [{"index": 0, "delta": {"content": f"word{k} "}, "finish_reason": None}],
        }
        lines += [b"data: " + json.dumps(chunk).encode() + b"\n", b"\n"]
    last = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    lines += [b"data: " + json.dumps(last).encode() + b"\n", b"\n", b"data: [DONE]\n", b"\n"]
    return lines


async def _chunk_costs(events: int = 2000, rounds: int = 15) -> dict[str, float]:
    from agents.models._openai_stream import ChatStream
    from agents.models._streamed_answer import StreamedAnswer

    lines = _sse_lines(events)

    def reader():
        it = iter(lines)

        async def readline() -> bytes:
            return next(it, b"")

        return readline

    async def ours() -> None:
        async def consumer(chunk) -> None:
            return None

        await ChatStream(StreamedAnswer(consumer)).consume(reader())

    async def bare() -> None:
        readline = reader()
        text = []
        while line := await readline():
            if line.startswith(b"data: ") and line != b"data: [DONE]\n":
                delta = json.loads(line[6:])["choices"][0]["delta"]
                if delta.get("content"):
                    text.append(delta["content"])

    figures: dict[str, list[float]] = {"ours": [], "bare": []}
    for _ in range(rounds):
        for name, loop in (("ours", ours), ("bare", bare)):
            start = time.perf_counter()
            await loop()
            figures[name].append((time.perf_counter() - start) / (events + 1) * 1e6)
    return {name: statistics.median(values) for name, values in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-flight", default="1,100,1000")
    parser.add_argument("--only", default=",".join(CONTENDERS))
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_child(args.child, args.base_url, int(args.in_flight)))))
        return
    sizes = [int(x) for x in args.in_flight.split(",")]
    contenders = [c for c in args.only.split(",") if c in CONTENDERS]
    load = [Path("/proc/loadavg").read_text().split()[0]]
    samples: dict[tuple[str, int], list[dict]] = {}
    with FakeOpenAIServer() as server:
        for _ in range(args.rounds):
            for size in sizes:
                for contender in contenders:
                    record = _measure(contender, server.base_url, size)
                    if record is not None:
                        samples.setdefault((contender, size), []).append(record)
    load.append(Path("/proc/loadavg").read_text().split()[0])
    print(f"load average (1 min) before / after: {load[0]} / {load[1]}")
    print("| contender | in flight | calls/s | client CPU µs/call | memory KB/run in flight |")
    print("| --- | --- | --- | --- | --- |")
    for size in sizes:
        for contender in contenders:
            records = samples.get((contender, size))
            if not records:
                continue
            rate = statistics.median(r["calls"] / r["wall_s"] for r in records)
            cpu = statistics.median(r["cpu_s"] / r["calls"] * 1e6 for r in records)
            memory = statistics.median(r["mem_bytes"] / size / 1024 for r in records)
            print(f"| {contender} | {size:,} | {rate:,.0f} | {cpu:,.0f} | {memory:,.1f} |")
    costs = asyncio.run(_chunk_costs())
    print(
        f"µs per SSE event: native stream reader {costs['ours']:.2f}, "
        f"bare parse loop {costs['bare']:.2f}"
    )


if __name__ == "__main__":
    main()
