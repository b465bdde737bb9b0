"""The AG-UI server: an ASGI app that runs a network for any AG-UI client.

    from network.agui import app
    asgi = app(network)              # uvicorn module:asgi, or mount it in a FastAPI app

`POST /` takes a `RunAgentInput` (camelCase JSON) and answers with `text/event-stream`: one
frame per AG-UI event, made by `ag_ui.encoder.EventEncoder` (`data: <json>\\n\\n`, LF only).
RUN_STARTED echoes the request's threadId and runId. The client's messages are the run's
conversation (the last user message its input); its `state` is checked against the thread's
server-side record and the schema before anything runs (`network.agui.input`).

Refused requests get a JSON error `{"error": {"code", "message", "key"?}}`; nothing runs and
no thread is created or forgotten: 415 a body that is not `application/json`, 413 body too
large (default limit 1 MiB, `max_body_bytes=`) or a thread state over the registry's
`max_thread_bytes`, 401/403 refused by the `authorize` hook, 404 a thread owned by another
principal, 422 not a RunAgentInput, invalid state (naming the key), a `system` / `developer`
message, a tool result for a call the server never issued, a bad client tool; 403 a write to
an `app:` / `temp:` key; 409 a run already under way on the thread, a pending interrupt not
answered, or a resume that matches none.

A run that fails after it started ends its stream with RUN_ERROR (status 200, as the stream
had begun): the library's own error message, or for any other exception a generic message
whose reference is logged with the full exception (`network.agui.run_errors`). A client that
disconnects cancels its run. Each thread's server-side state, pending interrupts, issued tool
calls and owner are kept in `app.state.threads` (an in-memory `ThreadRegistry`), or, with
`store=`, in a thread store (`network.agui.stored`: threads survive restarts and are shared
by every server process on the database; one run per thread is decided by the store).

Beside the endpoint (GET): `<path>/capabilities`, the AG-UI 1.0 capabilities answer
(`network.agui.capabilities`), and `<path>/threads`, the caller's threads
(`network.agui.thread_list`). RUN_FINISHED carries the run's token usage.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any

import anyio
from ag_ui.encoder import EventEncoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from network.agui.auth import Authorize, check_owner, principal_of
from network.agui.budgets import check_budget, execute_on_budgets
from network.agui.capabilities import capabilities
from network.agui.content_type import check_content_type
from network.agui.errors import RequestError
from network.agui.handoffs import HandoffSubagents
from network.agui.input import parse, prepare
from network.agui.messages import SYSTEM_MESSAGE_POLICIES
from network.agui.registry import DEFAULT_MAX_THREAD_BYTES, ThreadRecord, ThreadRegistry
from network.agui.run_errors import ErrorScreen
from network.agui.stored import ConversationReplay, StoredRun, StoredThreads, open_stored_run
from network.agui.thread_list import list_limit, memory_listing, stored_listing
from network.agui.tool_results import pin_results, result_digest
from network.errors import ConfigurationError
from network.logger import LazyLogger
from network.numbers import check_number
from network.run.context import RunContext
from network.run.streaming import EventStream
from network.threads.leases import DEFAULT_LEASE_TTL
from network.threads.thread_data import ANONYMOUS_USER

if TYPE_CHECKING:
    from network.continuing import RunnableNetwork

DEFAULT_MAX_BODY_BYTES = 1024 * 1024

log = LazyLogger("agent_network.agui")


def app(
    network: RunnableNetwork,
    *,
    path: str = "/",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    threads: ThreadRegistry | None = None,
    authorize: Authorize | None = None,
    system_messages: str = "refuse",
    store: Any = None,
    lease_ttl: float = DEFAULT_LEASE_TTL,
    max_thread_bytes: int = DEFAULT_MAX_THREAD_BYTES,
    budget: Any = None,
) -> Starlette:
    """An ASGI app serving `network` over AG-UI at `path` (POST).

    Args:
        network: the `Network` to run.
        path: where the endpoint is mounted (default "/").
        max_body_bytes: larger request bodies are refused with 413 (default 1 MiB).
        threads: the thread registry to use (default: a new in-memory one); its
            `max_threads`, `max_bytes` and `max_thread_bytes` bound the server's memory.
        authorize: `authorize(request, thread_id)` (sync or async) returning the caller's
            principal (a user id), or raising `Unauthorized` / `Forbidden`; threads belong to
            the principal that created them (see `network.agui.auth`). Default: anonymous.
        system_messages: what to do with a client's `system` / `developer` messages:
            "refuse" (422, the default) or "as_user" (passed on as user messages).
        store: run every thread on this thread store (a store, a database URL or an SQLite
            path) instead of in memory; see `network.agui.stored`. A store given as a URL or
            path is opened by the app and closed at its shutdown.
        lease_ttl: with `store`, how long (seconds) a run's lease on its thread lasts
            without renewal: how long a thread stays busy after its process died mid-run.
        max_thread_bytes: with `store`, the largest state one thread may hold (413 beyond).
        budget: the shared budgets of the served runs: a `SharedBudget` (or a list), or a
            function of the principal returning the budgets of its runs (see
            `network.agui.budgets`). Default: the network's own.
    """
    if system_messages not in SYSTEM_MESSAGE_POLICIES:
        raise ConfigurationError(
            f"app: system_messages must be one of {SYSTEM_MESSAGE_POLICIES}, "
            f"got {system_messages!r}"
        )
    if authorize is not None and not callable(authorize):
        raise ConfigurationError(f"app: authorize must be callable, got {authorize!r}")
    check_number("app: max_body_bytes", max_body_bytes, integer=True, minimum=1)
    if store is not None and threads is not None:
        raise ConfigurationError("app: give threads= (in memory) or store=, not both")
    check_number("app: max_thread_bytes", max_thread_bytes, integer=True, minimum=1)
    registry = threads if threads is not None else ThreadRegistry()
    stored = StoredThreads(store, lease_ttl=lease_ttl) if store is not None else None
    server = _Server(network, registry, max_body_bytes, authorize, system_messages, stored)
    server.budget = check_budget(budget)
    if stored is not None:
        server.max_thread_bytes = max_thread_bytes
    base = path.rstrip("/")
    routes = [
        Route(path, server.handle, methods=["POST"]),
        Route(f"{base}/capabilities", server.capabilities, methods=["GET"]),
        Route(f"{base}/threads", server.thread_list, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> Any:
        yield
        if stored is not None:
            await stored.close()

    starlette = Starlette(routes=routes, lifespan=lifespan)
    starlette.state.threads = registry
    starlette.state.stored = stored
    starlette.state.network = network
    return starlette


class _Server:
    def __init__(
        self,
        network: RunnableNetwork,
        threads: ThreadRegistry,
        max_body_bytes: int,
        authorize: Authorize | None,
        system_messages: str,
        stored: StoredThreads | None = None,
    ) -> None:
        self.network = network
        self.threads = threads
        self.max_body_bytes = max_body_bytes
        self.authorize = authorize
        self.system_messages = system_messages
        self.stored = stored
        self.max_thread_bytes = threads.max_thread_bytes
        self.budget: Any = None  # shared budgets of the runs (network.agui.budgets)

    async def capabilities(self, request: Request) -> Any:
        """GET <path>/capabilities: what this server supports (nothing about any user)."""
        return JSONResponse(capabilities(self.network, stored=self.stored is not None))

    async def thread_list(self, request: Request) -> Any:
        """GET <path>/threads: the caller's threads, newest first."""
        try:
            limit = list_limit(request.query_params.get("limit"))
            principal = await principal_of(self.authorize, request, None)
            if self.stored is None:
                return JSONResponse(memory_listing(self.threads.owned_by(principal), limit))
            user = principal if principal is not None else ANONYMOUS_USER
            infos = await self.stored.list_threads(self.network.name, user)
        except RequestError as error:
            log.info("agui.refused", code=error.code, status=error.status, key=error.key)
            return JSONResponse(error.body(), status_code=error.status)
        return JSONResponse(stored_listing(infos, limit))

    async def handle(self, request: Request) -> Any:
        try:
            check_content_type(request.headers.get("content-type"))
            body = await _read_body(request, self.max_body_bytes)
            run_input = parse(body)
            principal = await principal_of(self.authorize, request, run_input.thread_id)
            if self.stored is not None:
                run = await open_stored_run(
                    self.stored,
                    self.network,
                    run_input,
                    principal,
                    system_messages=self.system_messages,
                    max_state_bytes=self.max_thread_bytes,
                )
                response = _EventResponse(self.network, self.threads, run.record, run.ctx, run)
                response.budget = self.budget
                return response
            # From here on no await until the record is admitted and marked busy, so two
            # requests on one thread cannot both get through.
            record = self.threads.peek(run_input.thread_id)
            check_owner(record, principal)
            if record is None:  # joins the registry only if the request is accepted
                record = ThreadRecord(run_input.thread_id, owner=principal)
            elif record.busy:
                raise RequestError(
                    409,
                    "thread_busy",
                    f"thread {record.thread_id!r} has a run under way ({record.run_id}); "
                    "wait for it to finish",
                )
            ctx = prepare(
                self.network,
                record,
                run_input,
                system_messages=self.system_messages,
                max_state_bytes=self.threads.max_thread_bytes,
            )
        except RequestError as error:
            log.info("agui.refused", code=error.code, status=error.status, key=error.key)
            return JSONResponse(error.body(), status_code=error.status)
        ctx.record_model_calls = True  # RUN_FINISHED's usage per provider and model
        record.run_id = ctx.run_id  # before any await: one run per thread at a time
        self.threads.admit(record)
        response = _EventResponse(self.network, self.threads, record, ctx)
        response.budget = self.budget
        return response


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

    def __init__(
        self,
        network: RunnableNetwork,
        threads: ThreadRegistry,
        record: ThreadRecord,
        ctx: RunContext,
        stored: StoredRun | None = None,
    ) -> None:
        self.network = network
        self.threads = threads
        self.record = record
        self.ctx = ctx
        self.stored = stored  # the run's thread is on a store (else in `threads`)
        self.budget: Any = None  # the server's shared budgets (network.agui.budgets)

    async def _note_calls(self, event: Any) -> None:
        kind = event.type
        if kind == "TOOL_CALL_START":  # a call the client may send a result for
            self.record.issued_calls.setdefault(event.tool_call_id, None)
        elif kind == "TOOL_CALL_RESULT":  # ... and the only result it may send for it
            self.record.issued_calls[event.tool_call_id] = result_digest(event.content)

    async def _run_stored(self, sink: Any, run: StoredRun) -> Any:
        ctx = self.ctx
        replay = ConversationReplay(sink, ctx.state.messages, run.stored_messages)
        screen = ErrorScreen(replay if run.replay else sink)
        try:
            # The session's sink first: a client that sees STEP_FINISHED knows the call is saved.
            execute = functools.partial(self.network.execute, ctx, sinks=[run.session.sink, screen])
            principal = self.record.owner
            return await execute_on_budgets(
                self.network, self.budget, principal, ctx, run.session, execute
            )
        except Exception as error:
            with contextlib.suppress(Exception):  # a client that is gone cannot be told
                await screen.report(error, ctx.run_id)
            raise
        finally:
            if not ctx.resume:  # the pending interrupts were answered (the run took them)
                run.threads.remember(ctx.thread_id or "", list(ctx.interrupts))

    async def _run(self, sink: Any) -> Any:
        sink = HandoffSubagents(sink, self.network)  # a handoff's target shown as a sub-agent
        if self.stored is not None:
            return await self._run_stored(sink, self.stored)
        ctx = self.ctx
        record = self.record
        screen = ErrorScreen(sink)
        pin_results(record, ctx.state.messages)
        try:
            execute = functools.partial(self.network.execute, ctx, sinks=[self._note_calls, screen])
            principal = record.owner
            return await execute_on_budgets(
                self.network, self.budget, principal, ctx, None, execute
            )
        except Exception as error:
            with contextlib.suppress(Exception):  # a client that is gone cannot be told
                await screen.report(error, ctx.run_id)
            raise
        finally:
            # What the client was shown is what the server keeps: also after an error or a
            # cancellation, so the next request's state diff starts from the same place.
            record.state = ctx.state.snapshot()
            record.active_agent = ctx.active_agent
            if not ctx.resume:  # the pending interrupts were answered (the run took them)
                record.interrupts = list(ctx.interrupts)
            record.runs += 1
            self.threads.resize(record)

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
                if self.stored is not None:
                    group.start_soon(self.stored.keep_lease)
                async with EventStream(self._run) as events:
                    try:
                        async for event in events:
                            frame = encoder.encode(event).encode()
                            await send(
                                {"type": "http.response.body", "body": frame, "more_body": True}
                            )
                    except Exception as error:  # the stream already ended with RUN_ERROR
                        log.warning("agui.run_error", run_id=self.ctx.run_id, error=repr(error))
                group.cancel_scope.cancel()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away while we were writing
            pass
        finally:
            self.record.run_id = None
            if self.stored is not None:
                await self.stored.release()


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return
