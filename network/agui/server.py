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
answered, or a resume that matches none; 503 `server_busy` with `Retry-After` while
`max_runs` runs stream on the server (asked first, before the body is read; a body being
read holds a slot until it is whole, so the bodies held at once are bounded too); 408
`body_timeout` a body not whole within 30 seconds.

A run that fails after it started ends its stream with RUN_ERROR (status 200, as the stream had
begun): the library's own error message, or for any other exception a generic message whose
reference is logged with the full exception (`network.agui.run_errors`); a run cancelled from
inside ends it with RUN_FINISHED, outcome cancelled (`network.agui.cancelled_runs`). A client
that disconnects cancels its run. Each thread's server-side state, pending interrupts, issued
tool calls and owner are kept in `app.state.threads` (an in-memory `ThreadRegistry`), or, with
`store=`, in a thread store (threads survive restarts and are shared by every server process on
the database; one run per thread is decided by the store).

Principals, thread ownership, admission (one run per thread, leases), body and id limits,
error screening and exactly-once answers to approvals are the serving layer's
(`network.serving`), shared with the MCP server; this module is AG-UI's routes and encoding.

Beside the endpoint (GET): `<path>/capabilities`, the AG-UI 1.0 capabilities answer
(`network.agui.capabilities`), `<path>/threads`, the caller's threads
(`network.agui.thread_list`), and `<path>/threads/{threadId}`, one of them: its state,
conversation and pending approvals (`network.agui.thread_view`). RUN_FINISHED carries the
run's token usage.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from network.agui.budgets import (
    BudgetOf,
    check_budget,
    execute_on_budgets,
    principal_budgets,
)
from network.agui.cancelled_runs import cancelled_from_inside
from network.agui.capabilities import capabilities
from network.agui.frames import FrameWriter
from network.agui.handoffs import HandoffSubagents
from network.agui.input import check_request, first_messages, parse
from network.agui.messages import SYSTEM_MESSAGE_POLICIES
from network.agui.observers import Observers, check_observers, observer_sinks
from network.agui.run_errors import ErrorScreen
from network.agui.stored import ConversationReplay, lacks_stored_messages
from network.agui.thread_list import listing
from network.agui.thread_view import thread_answer
from network.agui.tool_results import pin_results
from network.errors import ConfigurationError
from network.logger import LazyLogger
from network.numbers import check_number
from network.run.agui_encoder import agui_sink
from network.run.context import RunContext
from network.run.emitter import Listener, Observer, Sink
from network.run.events import RunEvent, ToolCallStarted, ToolResult
from network.run.temp_sources import error_temp_masks
from network.serving.admission import Admission
from network.serving.capacity import RunSlots
from network.serving.content_type import check_content_type
from network.serving.errors import RequestError
from network.serving.limits import (
    DEFAULT_MAX_BODY_BYTES,
    check_thread_id,
    list_limit,
    read_body,
)
from network.serving.principals import Authorize
from network.serving.registry import (
    DEFAULT_MAX_THREAD_BYTES,
    SERVER_CALL,
    ThreadRegistry,
    result_digest,
)
from network.serving.threads import ServedThreads
from network.state.temp_masks import masked
from network.telemetry.propagation import continue_remote, incoming
from network.threads.leases import DEFAULT_LEASE_TTL

__all__ = ["app"]

if TYPE_CHECKING:
    from network.run.definition import RunnableNetwork

log = LazyLogger("agent_network.agui")
EVENT_STREAM = b"text/event-stream"  # ag_ui.encoder.EventEncoder's content type


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
    observers: Observers | None = None,
    max_runs: int | RunSlots | None = None,
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
            the principal that created them (see `network.serving.principals`). Default:
            anonymous.
        system_messages: what to do with a client's `system` / `developer` messages:
            "refuse" (422, the default) or "as_user" (passed on as user messages).
        store: run every thread on this thread store (a store, a database URL or an SQLite
            path) instead of in memory; see `network.serving.stored`. A store given as a URL
            or path is opened by the app and closed at its shutdown.
        lease_ttl: with `store`, how long (seconds) a run's lease on its thread lasts
            without renewal: how long a thread stays busy after its process died mid-run.
        max_thread_bytes: with `store`, the largest state one thread may hold (413 beyond).
        budget: the shared budgets of the served runs: a `SharedBudget` (or a list), or a
            function of the principal returning the budgets of its runs (see
            `network.agui.budgets`). Default: the network's own.
        observers: `observers(ctx)`: event sinks each run also gets, made for its context,
            ahead of the client's stream (the dev UI adds each step's details this way).
        max_runs: the most runs streaming at once, over all threads; a request beyond is
            refused at once with 503 `server_busy` and `Retry-After`, before its body is
            read. A count, or a `RunSlots` shared with another server of the process;
            default `network.serving.capacity.default_max_runs()` (at most 512).
    """
    _check_options(system_messages, max_body_bytes, path)
    observers = check_observers(observers)  # before a store is opened
    served = _served_threads(
        network,
        authorize=authorize,
        threads=threads,
        store=store,
        lease_ttl=lease_ttl,
        max_thread_bytes=max_thread_bytes,
        max_runs=max_runs,
    )
    server = _Server(
        network,
        served,
        max_body_bytes,
        system_messages,
        check_budget(budget),
        observers,
    )
    return _asgi(server, path)


def _check_options(system_messages: str, max_body_bytes: int, path: str) -> None:
    """`app`'s own options (the threads' are `ServedThreads`'), or a `ConfigurationError`."""
    if not isinstance(path, str) or not path.startswith("/") or "{" in path:
        raise ConfigurationError(
            f"app: path must be a URL path starting with '/' (no '{{'), got {path!r}"
        )
    if system_messages not in SYSTEM_MESSAGE_POLICIES:
        raise ConfigurationError(
            f"app: system_messages must be one of {SYSTEM_MESSAGE_POLICIES}, "
            f"got {system_messages!r}"
        )
    check_number("app: max_body_bytes", max_body_bytes, integer=True, minimum=1)


def _served_threads(network: RunnableNetwork, **options: Any) -> ServedThreads:
    """The served threads of `network`; a bad option is a `ConfigurationError` naming `app`."""
    try:
        return ServedThreads(network, **options)
    except ConfigurationError as exc:
        raise ConfigurationError(f"app: {exc}") from exc


def _asgi(server: _Server, path: str) -> Starlette:
    """The Starlette app of `server`'s routes under `path`; closes its threads at shutdown."""
    served = server.served
    base = path.rstrip("/")
    routes = [
        Route(path, server.handle, methods=["POST"]),
        Route(f"{base}/capabilities", server.capabilities, methods=["GET"]),
        Route(f"{base}/threads", server.thread_list, methods=["GET"]),
        Route(f"{base}/threads/{{thread_id:path}}", server.thread, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> Any:
        yield
        await served.close()

    starlette = Starlette(routes=routes, lifespan=lifespan)
    starlette.state.threads = served.registry
    starlette.state.stored = served.stored
    starlette.state.served = served
    starlette.state.network = server.network
    return starlette


def _refused(error: RequestError) -> JSONResponse:
    log.info("agui.refused", code=error.code, status=error.status, key=error.key)
    headers = error.headers()
    if error.status == 401:  # a 401 says how to authenticate (RFC 9110), as A2A's and MCP's do
        headers["www-authenticate"] = "Bearer"
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


@dataclass(eq=False)
class _Server:
    """The app's endpoints, over what `app` was given (checked)."""

    network: RunnableNetwork
    served: ServedThreads
    max_body_bytes: int
    system_messages: str
    budget: BudgetOf | tuple[Any, ...] | None  # (network.agui.budgets)
    observers: Observers | None

    async def capabilities(self, request: Request) -> Any:
        """GET <path>/capabilities: what this server supports (nothing about any user)."""
        return JSONResponse(capabilities(self.network, stored=self.served.on_store))

    async def thread_list(self, request: Request) -> Any:
        """GET <path>/threads: the caller's threads, newest first."""
        try:
            limit = list_limit(request.query_params.get("limit"))
            principal = await self.served.principal(request, None)
            headers = await self.served.list_threads(principal)
        except RequestError as error:
            return _refused(error)
        return JSONResponse(listing(headers, limit))

    async def thread(self, request: Request) -> Any:
        """GET <path>/threads/{threadId}: one of the caller's threads, for a page that
        reloads (`network.agui.thread_view`); refused as a run on it would be."""
        thread_id = request.path_params["thread_id"]
        try:
            check_thread_id(thread_id, "threadId")
            principal = await self.served.principal(request, thread_id)
            view = await self.served.read(thread_id, principal)
        except RequestError as error:
            return _refused(error)
        return JSONResponse(thread_answer(view))

    async def _stranger(self, request: Request) -> RequestError | None:
        """The 401 for a caller the hook does not know, asked with no thread (as for the
        thread list) before the body is read: a stranger hears 401 whatever its body, not
        how a request must look; None when the caller is known (or the server has no hook;
        a refusal other than 401 is left to the request's own ask, with its thread)."""
        if self.served.authorize is None:
            return None
        try:
            await self.served.principal(request, None)
        except RequestError as refused:
            return refused if refused.status == 401 else None
        return None

    async def handle(self, request: Request) -> Any:
        try:
            # who asks, first: a stranger hears 401 whatever its body, and the server reads
            # no body of a caller it does not know (one could hold it with a body never sent)
            stranger = await self._stranger(request)
            if stranger is not None:
                raise stranger
            # A body being read holds a run's slot (a full server takes no body in), so the
            # bodies held at once are bounded with the runs: `admit` takes the run's own.
            with self.served.slots.take():
                check_content_type(request.headers.get("content-type"))
                body = await read_body(
                    request.stream(), request.headers.get("content-length"), self.max_body_bytes
                )
            run_input = parse(body)
            principal = await self.served.principal(request, run_input.thread_id)
            # on a store, a new thread is created holding them by the claim
            messages = (
                first_messages(run_input, self.system_messages) if self.served.on_store else None
            )
            admission = await self.served.admit(
                run_input.thread_id, run_input.run_id, principal, messages
            )
        except RequestError as error:
            return _refused(error)
        except ClientDisconnect:  # gone before its body was whole: nobody to answer, no error
            return Response(status_code=400)
        try:
            asked = check_request(
                self.network,
                admission.record,
                run_input,
                system_messages=self.system_messages,
                messages=messages,
            )
            budgets = principal_budgets(self.network, self.budget, admission.record.owner)
            ctx = await admission.start(asked)
            # the caller's span (its `traceparent`): the run's trace continues it
            continue_remote(ctx, incoming(request.headers))
            extra = observer_sinks(self.observers, ctx)
            replay = self.served.on_store and lacks_stored_messages(
                islice(ctx.state.messages, admission.prior_messages), asked.messages
            )
        except BaseException as error:  # the thread and the run's slot are free again
            await admission.release()
            if isinstance(error, RequestError):
                return _refused(error)
            raise
        response = _EventResponse(self.network, admission, ctx, replay)
        response.budget = budgets
        response.extra = extra
        return response


class _EventResponse:
    """Streams one run as SSE frames, written in batches (`network.agui.frames`); always
    releases the thread when done.

    Written as a plain ASGI callable rather than a StreamingResponse: the run goes on in this
    task, so a client that goes away cancels it at once.
    """

    def __init__(
        self, network: RunnableNetwork, admission: Admission, ctx: RunContext, replay: bool
    ) -> None:
        self.network = network
        self.admission = admission
        self.record = admission.record
        self.ctx = ctx
        self.replay = replay  # the client lacks some of the stored conversation: send it
        self.released = False
        self.budget: tuple[Any, ...] = ()  # the principal's shared budgets
        self.extra: list[Sink] = []  # the sinks the app's `observers=` made for the run

    async def _note_calls(self, event: RunEvent) -> None:
        if isinstance(event, ToolCallStarted):  # a call the client may send the result of
            self.record.issued_calls.setdefault(event.call_id, SERVER_CALL)
        elif isinstance(event, ToolResult):  # ... the only result it may send for it
            self.record.issued_calls[event.call_id] = result_digest(event.content)

    def _note_handed_calls(self) -> None:
        """The calls handed to the client (its tools') are the ones it answers; the server
        answers its own, a call held for confirmation too (`network.agui.tool_results`)."""
        issued = self.record.issued_calls
        for call in self.ctx.engine.pending_tool_calls:
            if issued.get(call.id) == SERVER_CALL:
                issued[call.id] = None

    async def _run(self, sink: Any) -> Any:
        sink = HandoffSubagents(sink, self.network)  # a handoff's target shown as a sub-agent
        ctx, admission = self.ctx, self.admission
        if self.replay:  # a client coming back without the conversation gets it
            sink = ConversationReplay(
                sink,
                ctx.state.messages,
                admission.prior_messages,
                held=admission.held_messages,  # a new message sent with answers
            )
        # the run's typed events, screened, then encoded: AG-UI is written here, at the edge
        screen = ErrorScreen(agui_sink(sink), stopped=lambda: admission.stopped)
        sinks: list[Any] = [*self.extra]
        if admission.lease is None:  # in memory: the record vouches for what the client saw
            pin_results(self.record, ctx.state.messages)
            sinks.append(Observer(self._note_calls))
        sinks.append(Listener(screen))  # on a store the stored conversation vouches for it
        try:
            execute = functools.partial(admission.execute, ctx, sinks=sinks)
            session = getattr(admission, "session", None)  # a stored thread's
            return await execute_on_budgets(self.budget, self.record.owner, ctx, session, execute)
        except Exception as error:
            with contextlib.suppress(Exception):  # a client that is gone cannot be told
                await screen.report(error, ctx.run_id)
            raise
        finally:
            if admission.lease is None:
                self._note_handed_calls()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        frames = FrameWriter(send)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", EVENT_STREAM),
                        (b"cache-control", b"no-cache"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_on_disconnect, receive, group.cancel_scope)
                group.start_soon(frames.write)
                try:  # the run in this task: a client that goes away cancels it at once
                    await self._run(frames.sink)
                except Exception as error:  # the stream already ended with RUN_ERROR
                    told = repr(error)  # masked as the run's own log line is
                    masks = error_temp_masks(error)
                    told = masked(told, masks) if masks else told
                    log.warning("agui.run_error", run_id=self.ctx.run_id, error=told)
                except anyio.get_cancelled_exc_class():
                    if not cancelled_from_inside(group.cancel_scope):
                        raise
                    # its cancelled RUN_FINISHED is written: end the stream as for any end
                    log.warning("agui.run_cancelled", run_id=self.ctx.run_id)
                # The thread is free before the client reads the end of the run: its next
                # request, sent as soon as it has, must not find the thread busy.
                await self._release()
                await frames.close()  # the rest, and the end of the body
                group.cancel_scope.cancel()
        except OSError:  # the client went away while we were writing
            pass
        finally:
            await self._release()

    async def _release(self) -> None:
        if not self.released:
            self.released = True
            await self.admission.release()


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return
