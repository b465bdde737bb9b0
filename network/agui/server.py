"""The AG-UI server: an ASGI app that runs a network for any AG-UI client.

    from network.agui import app
    asgi = app(network)              # uvicorn module:asgi, or mount it in a FastAPI app

`POST /` takes a `RunAgentInput` (camelCase JSON) and answers with `text/event-stream`: one
frame per AG-UI event, made by `ag_ui.encoder.EventEncoder` (`data: <json>\\n\\n`, LF only).
RUN_STARTED echoes the request's threadId and runId. The client's messages are the run's
conversation (the last user message its input); its `state` is checked against the thread's
server-side record and the schema before anything runs (`network.agui.input`).

Refused requests get a JSON error `{"error": {"code", "message", "key"?}}` and nothing runs:
413 body too large (default limit 1 MiB, `max_body_bytes=`), 422 not a RunAgentInput or
invalid state (naming the key), 403 a write to an `app:` / `temp:` key, 409 a run already
under way on the thread, a pending interrupt not answered, or a resume that matches none.

A run that fails after it started ends its stream with RUN_ERROR (status 200, as the stream
had begun). A client that disconnects cancels its run. Each thread's server-side state and
pending interrupts are kept in `app.state.threads` (an in-memory `ThreadRegistry`).
"""

from __future__ import annotations

from typing import Any

import anyio
from ag_ui.encoder import EventEncoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from network.agui.errors import RequestError
from network.agui.input import parse, prepare
from network.agui.registry import ThreadRecord, ThreadRegistry
from network.logger import LazyLogger
from network.run.context import RunContext
from network.run.streaming import EventStream

DEFAULT_MAX_BODY_BYTES = 1024 * 1024

log = LazyLogger("agent_network.agui")


def app(
    network: Any,
    *,
    path: str = "/",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    threads: ThreadRegistry | None = None,
) -> Starlette:
    """An ASGI app serving `network` over AG-UI at `path` (POST).

    Args:
        network: the `Network` to run.
        path: where the endpoint is mounted (default "/").
        max_body_bytes: larger request bodies are refused with 413 (default 1 MiB).
        threads: the thread registry to use (default: a new in-memory one).
    """
    registry = threads if threads is not None else ThreadRegistry()
    server = _Server(network, registry, max_body_bytes)
    starlette = Starlette(routes=[Route(path, server.handle, methods=["POST"])])
    starlette.state.threads = registry
    starlette.state.network = network
    return starlette


class _Server:
    def __init__(self, network: Any, threads: ThreadRegistry, max_body_bytes: int) -> None:
        self.network = network
        self.threads = threads
        self.max_body_bytes = max_body_bytes

    async def handle(self, request: Request) -> Any:
        try:
            body = await _read_body(request, self.max_body_bytes)
            run_input = parse(body)
            record = self.threads.get(run_input.thread_id)
            if record.busy:
                raise RequestError(
                    409,
                    "thread_busy",
                    f"thread {record.thread_id!r} has a run under way ({record.run_id}); "
                    "wait for it to finish",
                )
            ctx = prepare(self.network, record, run_input)
        except RequestError as error:
            log.info("agui.refused", code=error.code, status=error.status, key=error.key)
            return JSONResponse(error.body(), status_code=error.status)
        record.run_id = ctx.run_id  # taken before any await: one run per thread at a time
        return _EventResponse(self.network, record, ctx)


async def _read_body(request: Request, limit: int) -> bytes:
    too_large = RequestError(
        413, "body_too_large", f"request body is larger than the limit of {limit} bytes"
    )
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise too_large
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


class _EventResponse:
    """Streams one run as SSE frames; always releases the thread when done.

    Written as a plain ASGI callable rather than a StreamingResponse so that the event
    iterator is closed in this task when the client goes away (cancelling the run at once).
    """

    def __init__(self, network: Any, record: ThreadRecord, ctx: RunContext) -> None:
        self.network = network
        self.record = record
        self.ctx = ctx

    async def _run(self, sink: Any) -> Any:
        ctx = self.ctx
        record = self.record
        try:
            return await self.network.execute(ctx, sinks=[sink])
        finally:
            # What the client was shown is what the server keeps: also after an error or a
            # cancellation, so the next request's state diff starts from the same place.
            record.state = ctx.state.snapshot()
            if not ctx.resume:  # the pending interrupts were answered (the run took them)
                record.interrupts = list(ctx.interrupts)
            record.runs += 1

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        encoder = EventEncoder()
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", encoder.get_content_type().encode()),
                        (b"cache-control", b"no-cache"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
                async with EventStream(self._run) as events:
                    try:
                        async for event in events:
                            frame = encoder.encode(event).encode()
                            await send(
                                {"type": "http.response.body", "body": frame, "more_body": True}
                            )
                    except Exception as error:  # the stream already ended with RUN_ERROR
                        log.warning("agui.run_failed", run_id=self.ctx.run_id, error=repr(error))
                group.cancel_scope.cancel()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away while we were writing
            pass
        finally:
            self.record.run_id = None


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return
