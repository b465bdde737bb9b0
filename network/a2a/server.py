"""`app(network)`: the network served over A2A 1.0 (and 0.3), on the serving layer.

    from network.a2a import app
    asgi = app(network, store="threads.db")    # uvicorn module:asgi

Routes (all under the app's mount point):

- `GET /.well-known/agent-card.json` (and `<path>/.well-known/agent-card.json`): the agent
  card (`network.a2a.card`), its interfaces' URLs those of the request unless `url=` names
  the public one;
- `POST <path>` (default `/`): JSON-RPC, A2A 1.0 methods (`SendMessage`,
  `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`) and,
  for clients that send no `A2A-Version` header, 0.3's (`message/send`, `message/stream`,
  `tasks/get`, `tasks/cancel`, `tasks/resubscribe`), answered by the SDK's dispatcher;
- `<path>/v1/...`: the HTTP+JSON (REST) binding of the same methods (`rest=False` drops it);
  its reads (`GET`) are the caller's, refused 401 to a stranger as a call is. The card
  answers anyone: a client reads it before it has a token.

Before the SDK reads a body, the server refuses what the serving layer refuses of any
protocol (`network.serving`): a caller the `authorize` hook refuses (401 / 403, asked with
no thread first, before the body is read, so a stranger hears 401 whatever it sent; each
request's thread is asked again by the handler), a body that is not `application/json`
(415), larger than `max_body_bytes` (413), not UTF-8 (400), a JSON-RPC call the SDK would
answer with an internal error (`network.a2a.calls`: an `id` no answer can carry, a 0.3
method under another version's header), a 0.3 call whose params the SDK's 0.3 adapter cannot read
(invalid params, naming the field: `network.a2a.v03_params`), a message (a new task)
while `max_runs` tasks run (503 `server_busy`, `Retry-After`; one that gets past this check
as the last slot is taken is refused by the handler's admission, a JSON-RPC error naming
`server_busy` in its data). Then the handler
(`network.a2a.handler`) runs each task as one run of its context's thread.

Threads live on a thread store (A2A clients send only the new message, so the thread holds
the conversation): `store=` a store, a database URL or an SQLite path; by default a
`MemoryStore` of this process, bounded as the AG-UI server's memory is (at most 10,000
threads and 256 MiB of their records, the least recently used forgotten first, never one a
run holds: `network.serving.default_store`). Tasks are kept beside them
(`network.a2a.tasks`). Give the same store object to `network.agui.app` and one
conversation can go on over both protocols.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.types import AgentCard, SecurityScheme
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from network.a2a.calls import check_utf8, refused_call
from network.a2a.card import BEARER, agent_card
from network.a2a.handler import REQUEST, NetworkHandler
from network.a2a.tasks import DEFAULT_MAX_TASKS, TaskRecords, task_store_for
from network.a2a.v03_params import refused_0_3
from network.a2a.version import with_version
from network.errors import ConfigurationError
from network.logger import LazyLogger
from network.numbers import check_number
from network.run.definition import RunnableNetwork
from network.serving.capacity import RunSlots
from network.serving.content_type import check_content_type
from network.serving.default_store import default_memory_store
from network.serving.errors import RequestError
from network.serving.limits import DEFAULT_MAX_BODY_BYTES, check_json_depth, read_body
from network.serving.principals import Authorize
from network.serving.registry import DEFAULT_MAX_THREAD_BYTES
from network.serving.threads import ServedThreads
from network.threads.leases import DEFAULT_LEASE_TTL
from network.urls import is_http_url

log = LazyLogger("agent_network.a2a")


def app(
    network: RunnableNetwork,
    *,
    path: str = "/",
    store: Any = None,
    authorize: Authorize | None = None,
    url: str | None = None,
    description: str | None = None,
    security: Mapping[str, SecurityScheme] | None = None,
    rest: bool = True,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    lease_ttl: float = DEFAULT_LEASE_TTL,
    max_thread_bytes: int = DEFAULT_MAX_THREAD_BYTES,
    max_runs: int | RunSlots | None = None,
    max_tasks: int = DEFAULT_MAX_TASKS,
) -> Starlette:
    """An ASGI app serving `network` over A2A (see the module docstring).

    Args:
        network: the `Network` each task runs.
        path: where the JSON-RPC endpoint is (default "/"); REST is under `<path>/v1`.
        store: the thread store (a store, a database URL or an SQLite path; default a new
            bounded `MemoryStore`, `network.serving.default_store`). One given as a URL or
            path is opened here and closed at shutdown.
        authorize: `authorize(request, thread_id)` returning the caller's principal, as for
            the AG-UI server (`network.serving.principals`); default: anonymous.
        url: the public URL of the JSON-RPC endpoint for the agent card (default: the
            request's own).
        description: the card's description (default: the network's agents').
        security: the security schemes the card declares, by name (default: HTTP bearer
            when `authorize` is given, none otherwise).
        rest: also serve the HTTP+JSON binding.
        max_body_bytes: larger request bodies are refused with 413 (default 1 MiB).
        lease_ttl: seconds a run's lease on its thread lasts without renewal.
        max_thread_bytes: the largest state one thread may hold (413 beyond).
        max_runs: the most tasks running at once, over all contexts; a message beyond is
            refused at once: 503 `server_busy` with `Retry-After` (or, when it got past that
            check as the last slot was taken, a JSON-RPC error whose `data` is `{"code":
            "server_busy", "status": 503, "retryAfter": <seconds>}`). A count, or a
            `RunSlots` shared with another server of the process (the AG-UI app on the same
            store, say); default `network.serving.capacity.default_max_runs()` (at most 512).
    """
    check_number("app: max_body_bytes", max_body_bytes, integer=True, minimum=1)
    check_number("app: max_tasks", max_tasks, integer=True, minimum=1)
    _check_card_options(path, url, description, security, rest)
    served = _served(network, store, authorize, lease_ttl, max_thread_bytes, max_runs)
    assert served.stored is not None  # always on a store
    if security is None:
        security = {"bearer": BEARER} if authorize is not None else {}
    card = _Card(network, path, url, description, security, rest)
    handler = NetworkHandler(
        served,
        TaskRecords(network.name, task_store_for(served.stored.store, max_tasks=max_tasks)),
        card.fixed(),
    )
    starlette = Starlette(routes=_routes(handler, card, path, rest), lifespan=_Lifespan(handler))
    starlette.state.served = served
    starlette.state.handler = handler
    starlette.state.card = handler.card
    starlette.add_middleware(
        _Guard, served=served, max_body_bytes=max_body_bytes, rpc_path=path.rstrip("/")
    )
    return starlette


def _check_card_options(path: Any, url: Any, description: Any, security: Any, rest: Any) -> None:
    """The options the routes and the card are built from: a wrong type failed with an
    `AttributeError` or a protobuf `TypeError`, and a `url` that is no http(s) URL (an empty
    one, `ftp://...`) was put in the card, or taken for none, as given."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise ConfigurationError(f"app: path must start with '/', got {path!r}")
    if url is not None and not is_http_url(url):
        raise ConfigurationError(
            f"app: url must be the endpoint's public http(s) URL, with a host, got {url!r}"
        )
    if description is not None and not isinstance(description, str):
        raise ConfigurationError(
            f"app: description must be a string, got {type(description).__name__}"
        )
    if security is not None:
        if not isinstance(security, Mapping):
            raise ConfigurationError(
                "app: security must map scheme names to a2a.types.SecurityScheme, got "
                f"{type(security).__name__}"
            )
        for name, scheme in security.items():
            if not isinstance(name, str) or not name or not isinstance(scheme, SecurityScheme):
                raise ConfigurationError(
                    f"app: security[{name!r}] must be an a2a.types.SecurityScheme under a "
                    f"non-empty name, got {type(scheme).__name__}"
                )
    if not isinstance(rest, bool):
        raise ConfigurationError(f"app: rest must be True or False, got {rest!r}")


def _served(
    network: RunnableNetwork,
    store: Any,
    authorize: Authorize | None,
    lease_ttl: float,
    max_thread_bytes: int,
    max_runs: int | RunSlots | None,
) -> ServedThreads:
    """The served threads, always on a store (a `MemoryStore` when none is given)."""
    try:
        return ServedThreads(
            network,
            authorize=authorize,
            store=store if store is not None else default_memory_store(),
            lease_ttl=lease_ttl,
            max_thread_bytes=max_thread_bytes,
            max_runs=max_runs,
        )
    except ConfigurationError as exc:
        raise ConfigurationError(f"app: {exc}") from exc


@dataclass(frozen=True)
class _Card:
    """The agent card: the one the handler keeps, and the one each card request is shown
    (its interfaces' URLs those of the request unless `url` names the public one)."""

    network: RunnableNetwork
    path: str
    url: str | None
    description: str | None
    security: Mapping[str, SecurityScheme]
    rest: bool

    def fixed(self) -> AgentCard:
        """The card with the configured URL (or `path`), for the handler."""
        return agent_card(
            self.network,
            self.url or self.path,
            description=self.description,
            security=self.security,
        )

    async def route(self, request: Request) -> JSONResponse:
        """GET /.well-known/agent-card.json."""
        here = self.url or f"{str(request.base_url).rstrip('/')}{self.path}"
        rest_here = f"{here.rstrip('/')}/v1" if self.rest else None
        shown = agent_card(
            self.network,
            here,
            description=self.description,
            security=self.security,
            rest_url=rest_here,
        )
        return JSONResponse(agent_card_to_dict(shown))


def _routes(handler: NetworkHandler, card: _Card, path: str, rest: bool) -> list[Any]:
    """The card route, the JSON-RPC routes at `path` and (with `rest`) REST under `/v1`."""
    builder = _ContextBuilder()
    routes: list[Any] = [Route(AGENT_CARD_WELL_KNOWN_PATH, card.route, methods=["GET"])]
    if path.rstrip("/"):
        # also beside the endpoint: a client given the endpoint's URL as the agent's (the
        # SDK's card resolver, the official test kit) looks for the card under it
        routes.append(
            Route(f"{path.rstrip('/')}{AGENT_CARD_WELL_KNOWN_PATH}", card.route, methods=["GET"])
        )
    routes += create_jsonrpc_routes(
        handler, rpc_url=path, context_builder=builder, enable_v0_3_compat=True
    )
    if rest:
        routes += create_rest_routes(
            handler,
            context_builder=builder,
            enable_v0_3_compat=False,
            path_prefix=f"{path.rstrip('/')}/v1",
        )
    return routes


class _Lifespan:
    """The app's lifespan: the tasks' table set up before any request, the handler's task
    group open while the app serves, live tasks cancelled and the store closed at shutdown."""

    def __init__(self, handler: NetworkHandler) -> None:
        self.handler = handler

    @contextlib.asynccontextmanager
    async def __call__(self, _app: Starlette) -> AsyncIterator[None]:
        handler = self.handler
        await handler.records.setup()
        async with anyio.create_task_group() as group:
            handler.group = group
            try:
                yield
            finally:
                handler.group = None
                handler.live.cancel_all()
        await handler.served.close()


class _ContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, carrying the Starlette request for the `authorize` hook."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[REQUEST] = request
        return context


class _Guard:
    """What the serving layer refuses before a protocol reads a body (module docstring)."""

    def __init__(
        self, app: ASGIApp, *, served: ServedThreads, max_body_bytes: int, rpc_path: str
    ) -> None:
        self.app = app
        self.served = served
        self.max_body_bytes = max_body_bytes
        self.rpc_path = rpc_path  # the JSON-RPC endpoint's (REST's bodies are no calls)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        if scope["method"] == "GET":
            await self._read(request, scope, receive, send)
            return
        try:
            # who asks, first: a stranger hears 401 whatever its body, not how one must look
            await self.served.principal(request, None)
            check_content_type(request.headers.get("content-type"))
            body = await read_body(
                request.stream(), request.headers.get("content-length"), self.max_body_bytes
            )
            check_json_depth(body)  # the SDK's parser would answer its RecursionError's text
            check_utf8(body)  # and its UnicodeDecodeError's, or 500
            # what the SDK answered with an internal error or not at all, then 0.3 params its
            # 0.3 adapter answered -32600 or -32603
            invalid = None
            if _route_path(scope).rstrip("/") == self.rpc_path:
                invalid = refused_call(body, request.headers) or refused_0_3(body)
            if invalid is not None:
                await JSONResponse(invalid)(scope, receive, send)
                return
            slots = self.served.slots
            if slots.full and starts_a_task(scope.get("path", ""), body):
                # a full server refuses a new task over HTTP, as the other limits are (the
                # handler's admission decides when it is not full yet, in JSON-RPC's terms)
                raise slots.busy()
        except RequestError as refused:
            await _refuse(refused, scope, receive, send)
            return
        except ClientDisconnect:  # gone before its body was whole: nobody to answer, no error
            await Response(status_code=400)(scope, receive, send)
            return
        await self.app(with_version(scope, body), _replay(body, receive), send)

    async def _read(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        """A GET: the card answers anyone (a client reads it before it has a token); a
        read of the REST binding (`/v1/tasks...`) is the caller's, refused 401 to a stranger
        as a POST is (the SDK answered 400, the 401 only inside its details)."""
        if not scope.get("path", "").endswith(AGENT_CARD_WELL_KNOWN_PATH):
            try:
                await self.served.principal(request, None)
            except RequestError as refused:
                await _refuse(refused, scope, receive, send)
                return
        await self.app(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The request's path within the app (where it is mounted left out), as routes see it."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


async def _refuse(refused: RequestError, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer `refused` in the serving layer's JSON shape (with `WWW-Authenticate` on 401)."""
    log.info("a2a.refused", code=refused.code, status=refused.status)
    headers = {"www-authenticate": "Bearer"} if refused.status == 401 else {}
    headers.update(refused.headers())
    response = JSONResponse(refused.body(), status_code=refused.status, headers=headers)
    await response(scope, receive, send)


SENDING = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})


def starts_a_task(path: str, body: bytes) -> bool:
    """Whether a request sends a message (a task that runs): a JSON-RPC call of one of
    `SENDING`, or REST's `message:send` / `message:stream`. Anything else is left to the SDK
    (a body that is not JSON included): it answers it in its terms."""
    if path.endswith(("/message:send", "/message:stream")):
        return True
    try:
        call = json.loads(body)
    except ValueError:
        return False
    return isinstance(call, dict) and call.get("method") in SENDING


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the body already read, then the client's next messages."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
