"""Which HTTP transport a model call should ride: four bare loops, interleaved in one process.

Each loop is the same POST of a Chat Completions body (a fixed 10-message conversation) and
parse of the answer against the local fake OpenAI server, with nothing of this library in it:

- httpx: `httpx.AsyncClient` (what the native client used before);
- httpx on aiohttp: `httpx.AsyncClient(transport=httpx_aiohttp.AiohttpTransport())`, httpx's
  API over aiohttp's connections (skipped when the `httpx-aiohttp` package is missing);
- aiohttp: `aiohttp.ClientSession` (what the native client uses now);
- raw asyncio streams: the least a client of our own could do: one kept-alive connection,
  the request written by hand, a Content-Length answer read by hand. No chunked bodies, TLS,
  proxies, redirects or pool: a lower bound for a lean client, not one.

The loops take turns round after round against one server (its own process), so each sees the
same load; the figure is this process's CPU time per call, median over the rounds.

    python benchmarks/transports.py [--rounds 7] [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_openai_server import FakeOpenAIServer

HEADERS = {"Authorization": "Bearer x", "Content-Type": "application/json"}


def _body() -> bytes:
    messages = [{"role": "user", "content": "Append 1000 items."}]
    for k in range(4):
        call = {"id": f"c{k}", "type": "function"}
        call["function"] = {"name": "append_item", "arguments": json.dumps({"item": f"i{k}"})}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": "ok"})
    tool = {"type": "function", "function": {"name": "append_item", "parameters": {}}}
    return json.dumps({"model": "fake", "messages": messages, "tools": [tool]}).encode()


def httpx_loop(url: str, transport: object = None):
    import httpx

    client = httpx.AsyncClient(headers=HEADERS, transport=transport)  # type: ignore[arg-type]

    async def call(body: bytes) -> dict:
        reply = await client.post(url, content=body)
        return json.loads(reply.content)

    return call


def httpx_on_aiohttp_loop(url: str):
    try:
        from httpx_aiohttp import AiohttpTransport
    except ImportError:
        return None
    holder: list = []

    async def call(body: bytes) -> dict:
        if not holder:  # the transport's session belongs to the running loop
            holder.append(httpx_loop(url, AiohttpTransport()))
        return await holder[0](body)

    return call


def aiohttp_loop(url: str):
    import aiohttp

    holder: list = []

    async def call(body: bytes) -> dict:
        if not holder:
            holder.append(aiohttp.ClientSession(headers=HEADERS))
        async with holder[0].post(url, data=body) as reply:
            return json.loads(await reply.read())

    return call


def raw_loop(url: str):
    parts = urlsplit(url)
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Authorization: Bearer x\r\nContent-Type: application/json\r\n"
    ).encode()
    conn: list = []

    async def call(body: bytes) -> dict:
        if not conn:
            conn.extend(await asyncio.open_connection(parts.hostname, parts.port))
        reader, writer = conn
        writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        status = await reader.readline()
        assert status.startswith(b"HTTP/1.1 200"), status
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return json.loads(await reader.readexactly(length))

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300, help="calls per loop per round")
    args = parser.parse_args()
    body = _body()
    with FakeOpenAIServer() as server:
        url = server.base_url.rstrip("/") + "/chat/completions"
        makers = {
            "httpx": httpx_loop,
            "httpx on aiohttp": httpx_on_aiohttp_loop,
            "aiohttp": aiohttp_loop,
            "raw asyncio streams": raw_loop,
        }
        loops = {name: make(url) for name, make in makers.items()}
        loops = {name: loop for name, loop in loops.items() if loop is not None}

        async def measure() -> dict[str, list[float]]:
            for loop in loops.values():
                for _ in range(20):
                    assert (await loop(body))["choices"]
            cpu: dict[str, list[float]] = {name: [] for name in loops}
            for _ in range(args.rounds):
                for name, loop in loops.items():
                    start = time.process_time()
                    for _ in range(args.calls):
                        await loop(body)
                    cpu[name].append((time.process_time() - start) / args.calls * 1e6)
            return cpu

        load = Path("/proc/loadavg").read_text().split()[0]
        cpu = asyncio.run(measure())
    print(f"load average (1 min) at start: {load}")
    for name, values in cpu.items():
        rounds = [round(v) for v in values]
        print(f"{name:20} {statistics.median(values):6,.0f} µs CPU/call  (rounds: {rounds})")


if __name__ == "__main__":
    main()
