"""The floor: the benchmark workloads as a bare Python loop over dicts, no framework.

W1: a scripted in-process model returns one tool call per step; the tool appends to a list in
state; a code router (the while condition) stops when the list holds N items.
W2: the same run as a coroutine, the model call awaiting asyncio.sleep(0.01); 1000 runs at once.
W3: the same loop over HTTP against the fake OpenAI server (the history is a list of
wire-format dicts that each step appends to), on a bare `httpx.AsyncClient` or, with
`--mode aiohttp`, a bare `aiohttp.ClientSession`: the two Python transports' floors.

    python benchmarks/floor.py [--quick] [--workloads w1,w2,w3] [--base-url URL]
                               [--mode httpx|aiohttp]
"""

import asyncio
import json
import sys
from pathlib import Path

from bench_common import (
    W2_LATENCY_S,
    emit,
    log,
    measure_steps,
    measure_w2,
    package_versions,
    parse_args,
    w2_child_main,
)
from fake_openai_server import FakeOpenAIServer

TOOL_SPEC = {
    "type": "function",
    "function": {
        "name": "append_item",
        "description": "Append one item to the list in state.",
        "parameters": {
            "type": "object",
            "properties": {"item": {"type": "string"}},
            "required": ["item"],
        },
    },
}


def append_item(state: dict, item: str) -> str:
    state["items"].append(item)
    return "ok"


TOOLS = {"append_item": append_item}


def scripted_model(messages: list) -> dict:
    k = len(messages)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{k}",
                "type": "function",
                "function": {"name": "append_item", "arguments": {"item": f"item-{k}"}},
            }
        ],
    }


def _apply(state: dict, reply: dict) -> None:
    messages = state["messages"]
    messages.append(reply)
    for call in reply["tool_calls"]:
        fn = call["function"]
        result = TOOLS[fn["name"]](state, **fn["arguments"])
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})


def run_sync(n: int) -> int:
    state = {"items": [], "messages": [{"role": "user", "content": f"Append {n} items."}]}
    while len(state["items"]) < n:
        _apply(state, scripted_model(state["messages"]))
    return len(state["items"])


async def slow_model(messages: list) -> dict:
    await asyncio.sleep(W2_LATENCY_S)
    return scripted_model(messages)


async def run_w2(n: int) -> int:
    state = {"items": [], "messages": [{"role": "user", "content": f"Append {n} items."}]}
    while len(state["items"]) < n:
        _apply(state, await slow_model(state["messages"]))
    return len(state["items"])


def make_http_run(base_url: str, stream: bool = False, transport: str = "httpx"):
    """One W3 run as a bare loop: POST, parse the answer (or read its SSE lines), call the tool."""
    post = _aiohttp_post(base_url) if transport == "aiohttp" else _httpx_post(base_url)

    async def ask(messages: list) -> dict:
        body = {"model": "fake", "messages": messages, "tools": [TOOL_SPEC]}
        if stream:
            body["stream"] = True
        reply: dict = {"role": "assistant", "content": None}
        async for line in post(json.dumps(body).encode(), stream):
            if not stream:
                return json.loads(line)["choices"][0]["message"]
            if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                continue
            choices = json.loads(line[6:])["choices"]
            delta = choices[0]["delta"] if choices else {}
            if delta.get("content"):
                reply["content"] = (reply["content"] or "") + delta["content"]
            for piece in delta.get("tool_calls") or ():
                calls = reply.setdefault("tool_calls", [])
                if piece["index"] == len(calls):
                    calls.append(
                        {
                            "id": piece.get("id"),
                            "type": "function",
                            "function": {"name": piece["function"].get("name"), "arguments": ""},
                        }
                    )
                calls[piece["index"]]["function"]["arguments"] += (
                    piece["function"].get("arguments") or ""
                )
        return reply

    async def run_http(n: int) -> int:
        state = {"items": [], "messages": [{"role": "user", "content": f"Append {n} items."}]}
        messages = state["messages"]
        while len(state["items"]) < n:
            reply = await ask(messages)
            messages.append(reply)
            for call in reply.get("tool_calls") or ():
                fn = call["function"]
                result = TOOLS[fn["name"]](state, **json.loads(fn["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return len(state["items"])

    return run_http


def _httpx_post(base_url: str):
    import httpx

    client = httpx.AsyncClient(base_url=base_url, headers=_HEADERS)

    async def post(body: bytes, stream: bool):
        """The whole body (one item), or the stream's lines."""
        if not stream:
            resp = await client.post("/chat/completions", content=body)
            resp.raise_for_status()
            yield resp.content
            return
        async with client.stream("POST", "/chat/completions", content=body) as resp:
            resp.raise_for_status()
            async for line in resp.aiter_lines():
                yield line.encode()

    return post


def _aiohttp_post(base_url: str):
    import aiohttp

    session: list = []  # made on first use: a session belongs to the running loop
    url = base_url.rstrip("/") + "/chat/completions"

    async def post(body: bytes, stream: bool):
        if not session:
            session.append(aiohttp.ClientSession(headers=_HEADERS))
        async with session[0].post(url, data=body) as resp:
            resp.raise_for_status()
            if not stream:
                yield await resp.read()
                return
            async for line in resp.content:
                yield line

    return post


_HEADERS = {"Authorization": "Bearer x", "Content-Type": "application/json"}


def w3_metrics(base_url: str, args, metrics: dict) -> None:
    """W3 non-streamed, and streamed (w3s) as a bare SSE reader, on `args.mode`'s transport."""
    run = make_http_run(base_url, transport=args.mode)
    metrics.update(measure_steps("w3", run, args.w3_sizes, args, is_async=True))
    run = make_http_run(base_url, stream=True, transport=args.mode)
    metrics.update(measure_steps("w3s", run, args.w3_sizes, args, is_async=True))


def main() -> None:
    args = parse_args("Floor: the workloads as a bare Python loop.", modes=("httpx", "aiohttp"))
    if args.w2_once:
        w2_child_main(run_w2, args)
        return
    metrics: dict = {}
    transport = "httpx.AsyncClient" if args.mode == "httpx" else "aiohttp.ClientSession"
    notes = [f"W1: sync loop over dicts; W2: asyncio coroutines; W3: bare {transport} loop."]
    versions = {"python": sys.version.split()[0]}
    if "w1" in args.workloads:
        log("floor W1")
        metrics.update(measure_steps("w1", run_sync, args.w1_sizes, args, is_async=False))
    if "w2" in args.workloads:
        log("floor W2")
        metrics.update(measure_w2(str(Path(__file__).resolve()), [], args))
    if "w3" in args.workloads:
        try:
            __import__(args.mode)
        except ImportError:
            notes.append(f"W3 skipped: {args.mode} not installed")
        else:
            versions.update(package_versions(args.mode))
            log("floor W3")
            if args.base_url:
                w3_metrics(args.base_url, args, metrics)
            else:
                with FakeOpenAIServer() as server:
                    w3_metrics(server.base_url, args, metrics)
    emit("bare Python loop (floor)", args.mode, versions, metrics, notes)


if __name__ == "__main__":
    main()
