"""A small fake OpenAI-compatible server for the W3 benchmarks (standard library only).

It answers POST .../chat/completions with a call to the first tool the request offers until the
request's history holds N tool results (messages with role "tool"), then with a plain text
answer. N is taken from, in order:
  1. the request header `X-Fake-Steps: N`,
  2. the first integer in the first user message (the benchmarks send "Append N items."),
  3. the server's --steps default.
The tool call's arguments are {"item": "item-<k>"}, k being the number of tool results so far.

Non-streamed responses are the main path; `"stream": true` gets the same answer as one SSE
chunk followed by `data: [DONE]`. GET .../models lists the model "fake"; GET /stats returns the
number of completions served. HTTP/1.1 keep-alive, Content-Length or chunked request bodies.

Run it:   python benchmarks/fake_openai_server.py --port 8765
          -> prints "READY http://127.0.0.1:8765/v1" and serves until interrupted or
             --max-seconds (default 3600) elapse; it listens on 127.0.0.1 only.

Use it from code (any Python; the server runs in its own process so it does not share the
benchmark's CPU time or event loop):

    from fake_openai_server import FakeOpenAIServer
    with FakeOpenAIServer() as server:
        await litellm.acompletion(model="openai/fake", api_base=server.base_url, api_key="x",
                                  messages=[{"role": "user", "content": "Append 10 items."}],
                                  tools=[...])
"""

import argparse
import asyncio
import contextlib
import itertools
import json
import re
import subprocess
import sys
import threading
import time

_INT = re.compile(r"\d+")
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}


class FakeOpenAI:
    """The answering logic, independent of the transport."""

    def __init__(self, default_steps: int = 10, latency_s: float = 0.0) -> None:
        self.default_steps = default_steps
        self.latency_s = latency_s
        self.completions = 0
        self._ids = itertools.count(1)

    def target_steps(self, body: dict, headers: dict[str, str]) -> int:
        if "x-fake-steps" in headers:
            return int(headers["x-fake-steps"])
        for msg in body.get("messages") or ():
            if msg.get("role") == "user":
                match = _INT.search(_text_of(msg.get("content")))
                if match:
                    return int(match.group())
                break
        return self.default_steps

    def complete(self, body: dict, headers: dict[str, str]) -> dict:
        self.completions += 1
        messages = body.get("messages") or []
        done = sum(1 for m in messages if m.get("role") == "tool")
        target = self.target_steps(body, headers)
        tools = body.get("tools") or []
        serial = next(self._ids)
        if done < target and tools:
            name = tools[0].get("function", {}).get("name", "append_item")
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{serial}",
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps({"item": f"item-{done}"}),
                        },
                    }
                ],
            }
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": f"Done: {done} items appended."}
            finish = "stop"
        return {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "fake",
            "system_fingerprint": None,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": {"prompt_tokens": len(messages), "completion_tokens": 1, "total_tokens": 1},
        }


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _stream_chunks(completion: dict) -> bytes:
    choice = completion["choices"][0]
    delta = dict(choice["message"])
    if delta.get("tool_calls"):
        delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(delta["tool_calls"])]
    base = {k: completion[k] for k in ("id", "created", "model")}
    first = dict(base, object="chat.completion.chunk")
    first["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    last = dict(base, object="chat.completion.chunk", usage=completion["usage"])
    last["choices"] = [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]
    parts = [f"data: {json.dumps(c)}\n\n".encode() for c in (first, last)]
    return b"".join(parts) + b"data: [DONE]\n\n"


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0"))
    return await reader.readexactly(length) if length else b""


def _response(status: int, payload: bytes, content_type: str, keep_alive: bool) -> bytes:
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(payload)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    return head.encode() + payload


def make_handler(app: FakeOpenAI):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if line:
                        key, _, value = line.partition(":")
                        headers[key.strip().lower()] = value.strip()
                body = await _read_body(reader, headers)
                keep_alive = (
                    version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                )
                path = path.split("?", 1)[0].rstrip("/")
                ctype = "application/json"
                if method == "POST" and path.endswith("/chat/completions"):
                    try:
                        request = json.loads(body)
                    except ValueError:
                        status, payload = 400, b'{"error": {"message": "invalid JSON body"}}'
                    else:
                        if app.latency_s:
                            await asyncio.sleep(app.latency_s)
                        completion = app.complete(request, headers)
                        status = 200
                        if request.get("stream"):
                            payload, ctype = _stream_chunks(completion), "text/event-stream"
                        else:
                            payload = json.dumps(completion).encode()
                elif method == "GET" and path.endswith("/models"):
                    models = {"object": "list", "data": [{"id": "fake", "object": "model"}]}
                    status, payload = 200, json.dumps(models).encode()
                elif method == "GET" and path == "/stats":
                    status, payload = 200, json.dumps({"completions": app.completions}).encode()
                else:
                    status, payload = 404, b'{"error": {"message": "not found"}}'
                writer.write(_response(status, payload, ctype, keep_alive))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # client went away, or the server is shutting down
        finally:
            writer.close()

    return handle


async def serve(
    host: str,
    port: int,
    app: FakeOpenAI,
    max_seconds: float,
    exit_on_stdin_eof: bool,
) -> None:
    server = await asyncio.start_server(make_handler(app), host, port, backlog=4096)
    bound = server.sockets[0].getsockname()[1]
    print(f"READY http://{host}:{bound}/v1", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    if exit_on_stdin_eof:

        def watch_stdin() -> None:
            sys.stdin.read()  # returns when the parent closes our stdin or exits
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=watch_stdin, daemon=True).start()
    async with server:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=max_seconds)


class FakeOpenAIServer:
    """Runs the server in a child process; `with FakeOpenAIServer() as s: s.base_url`."""

    def __init__(
        self,
        steps: int = 10,
        latency_ms: float = 0.0,
        port: int = 0,
        python: str = sys.executable,
        max_seconds: float = 3600,
    ) -> None:
        self.cmd = [
            python,
            __file__,
            "--port",
            str(port),
            "--steps",
            str(steps),
            "--latency-ms",
            str(latency_ms),
            "--max-seconds",
            str(max_seconds),
            "--exit-on-stdin-eof",
        ]
        self.proc: subprocess.Popen | None = None
        self.base_url = ""

    def start(self) -> str:
        self.proc = subprocess.Popen(
            self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"fake OpenAI server did not start: {line!r}")
        self.base_url = line.split(" ", 1)[1]
        return self.base_url

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(timeout=5)
        self.proc = None

    def __enter__(self) -> "FakeOpenAIServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--host", default="127.0.0.1", help="loopback address to listen on")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--steps", type=int, default=10, help="default N when the request names none")
    p.add_argument("--latency-ms", type=float, default=0.0, help="delay before each completion")
    p.add_argument("--max-seconds", type=float, default=3600, help="stop by itself after this")
    p.add_argument("--exit-on-stdin-eof", action="store_true", help="stop when stdin closes")
    args = p.parse_args()
    if not args.host.startswith("127.") and args.host not in ("localhost", "::1"):
        p.error("the fake server only listens on loopback addresses")
    app = FakeOpenAI(default_steps=args.steps, latency_s=args.latency_ms / 1000)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.host, args.port, app, args.max_seconds, args.exit_on_stdin_eof))


if __name__ == "__main__":
    main()
