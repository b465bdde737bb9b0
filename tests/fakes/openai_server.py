"""A scripted fake OpenAI-compatible chat completions server on 127.0.0.1, for tests.

The server runs uvicorn + starlette in a background thread on a free port, so it never shares
the test's event loop. Each test queues the replies it wants, in order, and reads back the
JSON requests the server received:

    pytest_plugins = ["tests.fakes.openai_server"]  # in a test module: enables the fixture

    @pytest.mark.anyio
    async def test_hello(openai_server: FakeOpenAIServer) -> None:
        openai_server.add_text("Hello!", chunks=["Hel", "lo!"])
        model = LiteLLMModel("openai/fake", api_base=openai_server.base_url, api_key="x")
        ...
        assert openai_server.requests[0]["messages"][-1]["content"] == "Hi"

The `openai_server` fixture hands every test the one server of the session (started on first
use), reset before and after the test: empty queue, no recorded requests. Outside pytest,
`with FakeOpenAIServer() as server: ...` starts a server of its own.

What it speaks:
- `POST /v1/chat/completions` (and `/chat/completions`): the next queued `Reply`. Without
  `"stream": true` the reply is one `chat.completion` JSON body. With it, the reply is sent as
  SSE `chat.completion.chunk` events (`data: {...}\\n\\n`): a role chunk, the text in pieces,
  each tool call as a head chunk (id, name) followed by argument pieces, a chunk carrying the
  `finish_reason`, a usage chunk when the request asked for `stream_options.include_usage`,
  then `data: [DONE]`.
- Error replies (`add_error(500)`, `add_error(429)`) carry an OpenAI-style body
  `{"error": {"message", "type", "param", "code"}}` and a `retry-after-ms: 1` header, so a
  client that honours it (the openai SDK does) retries at once instead of backing off.
- An empty queue answers 400 "no scripted reply left": not retried, and it names the request,
  so a test that under-scripts fails loudly.
- Tool messages are checked as the real API checks them: a `tool` message that does not answer
  a tool call of the assistant message before it (an orphan), or an assistant message whose
  tool calls are not all answered before the next message, gets 400 `invalid_request_error`
  (the request is still recorded, and no queued reply is used).
- `GET /v1/models` lists the model "fake".
- `POST /v1/embeddings`: one vector per input text, `embedding_of(text)` (a deterministic one
  of `embedding_dimensions` floats unless `embeddings[text]` says otherwise);
  `embedding_status` (an HTTP status) makes the next ones fail. Recorded in
  `embedding_requests`.

Timing hooks, for tests that must prove something happens *before* the reply completes:
`Reply.delay` waits before answering (client timeouts), and `Reply.hold_after=k` sends the
first k SSE chunks and then waits for `server.release()` (or `hold_timeout` seconds). `held`
records, per hold, whether it was released in time: a streaming client that handles chunks as
they arrive can call `release()` from its chunk handler; one that buffers cannot.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "service_unavailable",
}


@dataclass
class FakeToolCall:
    """One tool call in a reply. `arguments` is a dict (sent as JSON) or a raw string.

    `chunks` are the argument pieces to stream; by default the JSON text is cut in pieces of
    `Reply.chunk_size` characters.
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    chunks: Sequence[str] | None = None

    @property
    def arguments_text(self) -> str:
        """The arguments as the wire carries them: a JSON string."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer: text and/or tool calls, or an HTTP error when `status` != 200."""

    text: str | None = None
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] | None = None  # default: derived from the request and reply sizes
    send_usage: bool = True  # False: no usage at all, as llama.cpp's server when streaming
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    chunks: Sequence[str] | None = None  # streamed text pieces; default: `chunk_size` pieces
    chunk_size: int = 4
    delay: float = 0.0  # seconds to wait before answering
    hold_after: int | None = None  # streaming: pause after this many chunks until release()
    hold_timeout: float = 5.0
    # Streaming failures, each after this many chunks: the connection cut without a proper end
    # (`cut_after`), an error event in the stream (`error_after`), or the stream simply
    # stopping before the finish-reason chunk with a regular `[DONE]` (`finish=False`).
    cut_after: int | None = None
    error_after: int | None = None
    finish: bool = True
    pings: bool = False  # SSE comments (": ping") before every chunk and through a hold
    # A reasoning model's thinking, sent before the answer under `reasoning_field` (vLLM and
    # DeepSeek: "reasoning_content"; OpenRouter: "reasoning"), in the message or the deltas.
    reasoning: str | None = None
    reasoning_field: str = "reasoning_content"
    # A line of plain text the server sends after the chunks (not SSE), as a crashing server
    # or a proxy in front of it may: what the server said.
    said: str | None = None
    # A whole (not streamed) answer sent in chunked transfer encoding: no Content-Length.
    unsized: bool = False

    def text_chunks(self) -> list[str]:
        """The text pieces a stream sends."""
        if self.chunks is not None:
            return list(self.chunks)
        text = self.text or ""
        return [text[i : i + self.chunk_size] for i in range(0, len(text), self.chunk_size)]


class FakeOpenAIServer:
    """The server: start it (or use it as a context manager), queue replies, read requests.

    Attributes:
        base_url: `http://127.0.0.1:<port>/v1`, the `api_base` to give a client.
        requests: the JSON body of every chat completion request, in arrival order.
        request_headers: their headers (lower-case names), same order.
        held: for each `hold_after` pause, True when `release()` ended it in time.
    """

    def __init__(self, keep_alive_s: float = 5.0) -> None:
        self.keep_alive_s = keep_alive_s  # an idle connection is closed after it (uvicorn's)
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.client_ports: list[int] = []  # the client's port per request: a reused connection
        self.held: list[bool] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.embeddings: dict[str, list[float]] = {}
        self.embedding_dimensions = 8
        self.embedding_status: int | None = None
        self._replies: deque[Reply] = deque()
        self._ids = itertools.count(1)
        self._release = threading.Event()
        self._closing = False
        self._generation = 0  # bumped by reset(): ends the delays and holds of earlier tests
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- scripting -----------------------------------------------------------------------

    def add(self, *replies: Reply) -> FakeOpenAIServer:
        """Queue replies, answered in order, one per request."""
        self._replies.extend(replies)
        return self

    def add_text(self, text: str, **options: Any) -> FakeOpenAIServer:
        """Queue a text answer; `options` are `Reply` fields (chunks, usage, delay, ...)."""
        return self.add(Reply(text=text, **options))

    def add_tool_calls(
        self, *calls: FakeToolCall | tuple[str, dict[str, Any] | str], **options: Any
    ) -> FakeOpenAIServer:
        """Queue an answer calling tools: `FakeToolCall`s or `(name, arguments)` pairs."""
        tool_calls = [c if isinstance(c, FakeToolCall) else FakeToolCall(*c) for c in calls]
        return self.add(Reply(tool_calls=tool_calls, **options))

    def add_error(self, status: int, message: str = "", **options: Any) -> FakeOpenAIServer:
        """Queue an HTTP error answer with an OpenAI-style error body."""
        message = message or f"fake server error {status}"
        return self.add(Reply(status=status, error_message=message, **options))

    @property
    def pending(self) -> int:
        """How many queued replies are still unanswered."""
        return len(self._replies)

    def release(self) -> None:
        """End the current `hold_after` pause of a streamed reply."""
        self._release.set()

    def reset(self) -> None:
        """Forget queued replies and recorded requests; end pending delays and holds."""
        self._generation += 1
        self._replies.clear()
        self.requests.clear()
        self.request_headers.clear()
        self.client_ports.clear()
        self.held.clear()
        self.embedding_requests.clear()
        self.embeddings.clear()
        self.embedding_dimensions = 8
        self.embedding_status = None
        self._release.clear()

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread until `close()`."""
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=self.keep_alive_s,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.005)
        return self

    def close(self) -> None:
        """Stop serving; pending delays and holds end at once."""
        self._closing = True
        self._release.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving -------------------------------------------------------------------------

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._completions, methods=["POST"]),
                Route("/chat/completions", self._completions, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            ]
        )

    async def _models(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def embedding_of(self, text: str) -> list[float]:
        """The vector the server answers for `text`."""
        if text in self.embeddings:
            return self.embeddings[text]
        seed = sum(ord(char) * (at + 1) for at, char in enumerate(text))
        return [((seed * (i + 7)) % 97) / 97.0 - 0.5 for i in range(self.embedding_dimensions)]

    async def _embeddings(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        body = await request.json()
        self.embedding_requests.append(body)
        if self.embedding_status is not None:
            status = self.embedding_status
            return JSONResponse(_error_body("embeddings failed", status), status_code=status)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": at, "embedding": self.embedding_of(text)}
            for at, text in enumerate(texts)
        ]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            }
        )

    async def _completions(self, request: Any) -> Any:
        from starlette.responses import JSONResponse, Response, StreamingResponse

        body = await request.json()
        self.requests.append(body)
        self.request_headers.append(dict(request.headers))
        self.client_ports.append(request.client.port if request.client else 0)
        problem = tool_pairing_problem(body.get("messages") or [])
        if problem is not None:
            return JSONResponse(_error_body(problem, 400), status_code=400)
        if not self._replies:
            number = len(self.requests)
            return JSONResponse(
                _error_body(f"fake server: no scripted reply left for request #{number}", 400),
                status_code=400,
            )
        reply = self._replies.popleft()
        await self._sleep(reply.delay)
        if reply.status != 200:
            headers = {"retry-after-ms": "1", **reply.headers}
            error = _error_body(reply.error_message, reply.status, reply.error_type)
            return JSONResponse(error, status_code=reply.status, headers=headers)
        model = str(body.get("model", "fake"))
        completion_id = f"chatcmpl-{next(self._ids)}"
        usage = reply.usage or _default_usage(body, reply)
        calls = [(c, c.id or f"call_{next(self._ids)}") for c in reply.tool_calls]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if reply.reasoning is not None:
                message[reply.reasoning_field] = reply.reasoning
            if calls:
                message["tool_calls"] = [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_text},
                    }
                    for call, call_id in calls
                ]
            completion = {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                **({"usage": usage} if reply.send_usage else {}),
            }
            if reply.unsized:
                whole = json.dumps(completion).encode()
                return StreamingResponse(
                    iter([whole[i : i + 1024] for i in range(0, len(whole), 1024)]),
                    media_type="application/json",
                    headers=reply.headers,
                )
            try:
                return JSONResponse(completion, headers=reply.headers)
            except UnicodeEncodeError:  # a lone surrogate: sent as JSON spells it, `\ud800`
                return Response(
                    json.dumps(completion), media_type="application/json", headers=reply.headers
                )
        include_usage = reply.send_usage and bool(
            (body.get("stream_options") or {}).get("include_usage")
        )
        chunks = list(_stream_chunks(reply, calls, finish, usage if include_usage else None))
        envelope = {"id": completion_id, "object": "chat.completion.chunk", "model": model}
        return StreamingResponse(
            self._sse(reply, chunks, envelope),
            media_type="text/event-stream",
            headers=reply.headers,
        )

    async def _sse(
        self, reply: Reply, chunks: list[dict[str, Any]], envelope: dict[str, Any]
    ) -> AsyncIterator[bytes]:
        created = int(time.time())
        if not reply.finish:
            chunks = [c for c in chunks if not c["choices"] or not c["choices"][0]["finish_reason"]]
        for number, chunk in enumerate(chunks):
            if reply.hold_after is not None and number == reply.hold_after:
                if reply.pings:  # keep-alives all through the pause, as real servers send
                    generation = self._generation
                    deadline = time.monotonic() + reply.hold_timeout
                    released = False
                    while self._live(generation) and time.monotonic() < deadline:
                        if self._release.is_set():
                            self._release.clear()
                            released = True
                            break
                        yield b": ping\n\n"
                        await self._sleep(0.05)
                    self.held.append(released)
                else:
                    self.held.append(await self._wait_release(reply.hold_timeout))
            if reply.cut_after is not None and number == reply.cut_after:
                raise ConnectionAbortedError("fake server: connection cut mid-stream")
            if reply.error_after is not None and number == reply.error_after:
                error = _error_body("fake server: the model crashed mid-stream", 500)
                yield f"data: {json.dumps(error)}\n\n".encode()
                return
            if reply.pings:
                yield b": ping\n\n"
            yield f"data: {json.dumps({**envelope, 'created': created, **chunk})}\n\n".encode()
        if reply.said is not None:
            yield reply.said.encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    async def _sleep(self, seconds: float) -> None:
        import asyncio

        # Small steps, so close() or reset() never waits for a long delay to run out.
        generation = self._generation
        deadline = time.monotonic() + seconds
        while self._live(generation) and time.monotonic() < deadline:
            await asyncio.sleep(min(0.01, max(0.0, deadline - time.monotonic())))

    async def _wait_release(self, timeout: float) -> bool:
        import asyncio

        generation = self._generation
        deadline = time.monotonic() + timeout
        while not self._release.is_set():
            if not self._live(generation) or time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.002)
        self._release.clear()
        return self._live(generation)

    def _live(self, generation: int) -> bool:
        return not self._closing and generation == self._generation


def tool_pairing_problem(messages: list[dict[str, Any]]) -> str | None:
    """What the real API would say about the request's tool messages, or None when each tool
    call is answered right after its assistant message and every tool message answers one."""
    waiting: list[str] = []  # tool call ids of the last assistant message not yet answered
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                return (
                    f"Invalid parameter: messages[{index}] with role 'tool' must be a response "
                    f"to a preceding message with 'tool_calls' (tool_call_id {call_id!r})."
                )
            waiting.remove(call_id)
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {', '.join(waiting)} "
                f"(before messages[{index}])."
            )
        if role == "assistant":
            waiting = [call.get("id") for call in message.get("tool_calls") or []]
    if waiting:
        return f"Tool calls without a response at the end of the messages: {', '.join(waiting)}."
    return None


def _error_body(message: str, status: int, error_type: str | None = None) -> dict[str, Any]:
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _default_usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    # Deterministic stand-ins for token counts: about four characters per token.
    prompt = len(json.dumps(body.get("messages", []))) // 4 + 1
    completion = len(reply.text or "") // 4 + sum(
        len(c.arguments_text) // 4 + 1 for c in reply.tool_calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _stream_chunks(
    reply: Reply,
    calls: list[tuple[FakeToolCall, str]],
    finish: str,
    usage: dict[str, int] | None,
) -> Iterator[dict[str, Any]]:
    """The `chat.completion.chunk` payloads of one streamed reply, in order."""

    def delta(payload: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": payload, "finish_reason": None}]}

    yield delta({"role": "assistant", "content": ""})
    thinking = reply.reasoning or ""
    for start in range(0, len(thinking), reply.chunk_size):
        yield delta({reply.reasoning_field: thinking[start : start + reply.chunk_size]})
    for piece in reply.text_chunks():
        yield delta({"content": piece})
    for index, (call, call_id) in enumerate(calls):
        head: dict[str, Any] = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        yield delta({"tool_calls": [head]})
        text = call.arguments_text
        size = reply.chunk_size
        pieces = call.chunks or [text[i : i + size] for i in range(0, len(text), size)]
        for piece in pieces:
            yield delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    if usage is not None:
        yield {"choices": [], "usage": usage}


@pytest.fixture(scope="session")
def openai_server_session() -> Iterator[FakeOpenAIServer]:
    """One server for the whole session (starting and stopping one costs about 0.25 s)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def openai_server(openai_server_session: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The session's `FakeOpenAIServer`, reset: no queued replies, no recorded requests."""
    openai_server_session.reset()
    yield openai_server_session
    openai_server_session.reset()
