"""The dev server: the page, the AG-UI endpoint it runs the network through, and JSON views.

    from network.devui import app
    asgi = app(network, store="agent-network.db")

Routes (all but `/agui/`, `/api/fork`, `/api/rewind` and `/api/replay` are GET and
read-only):

- `/`: the page; `/favicon.ico`: its icon (an SVG); `/static/<name>`: its script (ES
  modules: `devui.js` importing `dom.js`, `conversationview.js`, `graphview.js`, `patch.js`,
  `sse.js`, `stateview.js`, `timetravel.js`) and style (`devui.css`), files of this package,
  no build step.
  Any other name under `/static/` is a 404.
- `/agui/` (POST): the `network.agui` server itself, its runs observed by
  `observe.observers` (a CUSTOM event with each step's prompt, usage, duration and state
  writes). Runs, interrupts and their confirmation are the AG-UI server's:
  the same checks, the same in-memory thread registry, or with `run_on_store=True` the
  thread store `store` (`agent-network dev --store`). A request with the
  `x-agent-network-user` header runs as that user (`acting_user`).
- `/api/graph`: the network's nodes and edges (`graph.network_graph`).
- `/api/server`: `{"runs_on_store"}`: whether the page's runs live on the store it lists (a
  stored thread is then continued from the page).
- `/api/threads?limit=N`: the stored threads of this network's app, most recent first.
- `/api/thread?id=T`: one stored thread with its agent calls and their state deltas.
- `/api/history?thread=T&key=K`: `history_of(K)` in the stored thread T.
- `/api/value?thread=T&step=N&part=P[&call=C][&download=1]`: the whole text of a part of a
  stored agent call (`input`, `prompt`, `answer`, or tool call C's `arguments` / `result`),
  as `text/plain`, or as a file to save with `download=1` (`whole_values`).
- `/api/memories?user=U&limit=N`: the user's long-term memories, as the network's agents with
  memory read them (`memories`).
- `/api/fork` (POST `{"thread", "at", "update"?}`) and `/api/rewind` (POST `{"thread", "to"}`):
  `network.fork` / `network.rewind` on a stored thread (`branching`).
- `/api/replay` (POST `{"thread", "tools"?, "on_divergence"?, "routing"?}`): `network.replay`
  of a stored thread, answered with its report (`replaying`).

Everything from the browser is hostile: thread ids and keys follow the thread stores' rules
(`network.threads.ids`), `limit` is a bounded integer, and a bad value is a 422 naming the
parameter. An unknown thread is a 404. A failure of the store, or a stored thread that
cannot be decoded, is a 500 `store_failed` saying only that, with a reference the server logs
with the exception; no exception text reaches the page, which shows the error. Errors have the
AG-UI server's shape: `{"error": {"code", "message", "key"?}}`.

The `Host` header must name the machine the server is bound to (127.0.0.1 / localhost by
default): a web page a browser loads from elsewhere cannot reach the server through a DNS name
that points to 127.0.0.1 (DNS rebinding). Responses forbid framing and inline scripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from network.agui.server import app as agui_app
from network.devui.access import Access
from network.devui.acting_user import ByActingUser, user_from_header
from network.devui.branching import fork_view, rewind_view
from network.devui.graph import network_graph
from network.devui.http_errors import SECURITY_HEADERS, ParamError, store_failed
from network.devui.memories import memories_view
from network.devui.observe import observers
from network.devui.replay import history, thread_header, thread_replay
from network.devui.replaying import replay_view
from network.devui.store_access import reading
from network.devui.whole_values import PARTS, whole_value
from network.errors import ConfigurationError, InvalidIdError
from network.network import Network
from network.serving.errors import RequestError
from network.serving.limits import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, limit_in_range
from network.serving.principals import Authorize
from network.serving.registry import ThreadRegistry
from network.threads.ids import check_id
from network.threads.urls import store_url

__all__ = ["app", "dev_registry"]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # the page sends the whole conversation back
STATIC_FILES = {  # the page's ES modules and style: nothing else under /static/ is served
    "devui.js": "text/javascript",
    "conversationview.js": "text/javascript",
    "dom.js": "text/javascript",
    "graphview.js": "text/javascript",
    "patch.js": "text/javascript",
    "sse.js": "text/javascript",
    "stateview.js": "text/javascript",
    "timetravel.js": "text/javascript",
    "devui.css": "text/css",
}
# Browsers ask for /favicon.ico on every page load; a 404 there is an error in the console.
FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    b'<circle cx="8" cy="8" r="7" fill="#1d2430"/><circle cx="8" cy="8" r="3" fill="#2f6fde"/>'
    b"</svg>"
)
_ParamError = ParamError  # the names this module has always used
_store_failed = store_failed


def dev_registry() -> ThreadRegistry:
    """The dev UI's default in-memory thread registry: threads of up to 64 MiB of state each
    (a local tool's budget), 1 GiB in all. `agent-network dev --reload` shares one between
    the apps it rebuilds."""
    return ThreadRegistry(max_thread_bytes=64 * 1024 * 1024, max_bytes=1024 * 1024 * 1024)


def app(
    network: Network,
    *,
    store: Any = None,
    threads: ThreadRegistry | None = None,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    run_on_store: bool = False,
    authorize: Authorize | None = None,
) -> Starlette:
    """The dev UI of `network` as an ASGI app.

    Args:
        network: the `Network` the page runs.
        store: where the stored threads are read from: a thread store, a database URL or an
            SQLite path (default: `AGENT_NETWORK_STORE`, else `agent-network.db`). Only read.
        threads: the AG-UI server's thread registry (default: an in-memory one whose threads
            may hold up to 64 MiB of state each, a local tool's budget).
        allowed_hosts: the `Host` header values accepted (default: the loopback names); pass
            the name or address the server is reached by when it is bound elsewhere.
        max_body_bytes: the largest AG-UI request body (default 16 MiB).
        run_on_store: run the page's threads on `store` (what `agent-network dev --store`
            does): they are then stored as they run, listed beside the others, and continued
            after a reload or a restart. Default: runs in the in-memory registry `threads`.
        authorize: the AG-UI server's hook (`authorize(request, thread_id)` returning the
            caller's principal, or raising `Unauthorized` / `Forbidden`). With it, every data
            endpoint and every run asks it first, lists and shows only the principal's
            threads, and ignores the user header (`network.devui.access`). Without it the dev
            UI serves whoever reaches it: bind it to loopback only.
    """
    if run_on_store and threads is not None:
        raise ConfigurationError("devui: give threads= (in memory) or run_on_store=True, not both")
    # `is None`: an empty registry is falsy (it has a length)
    registry = threads if threads is not None else dev_registry()
    access = Access(authorize, network.name)
    views = _Views(network, store, access, runs_on_store=run_on_store)
    where: dict[str, Any] = (
        {
            "store": store if store is not None else store_url(None),
            "max_thread_bytes": 64 * 1024 * 1024,  # a local tool's budget
        }
        if run_on_store
        else {"threads": registry}
    )
    where["observers"] = observers  # each step's details, beside the AG-UI events
    runs = _runs(network, authorize, max_body_bytes, where)
    starlette = Starlette(
        routes=_routes(views, runs),
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))],
    )
    starlette.state.threads = registry
    starlette.state.network = network
    return starlette


def _runs(
    network: Network,
    authorize: Authorize | None,
    max_body_bytes: int,
    where: dict[str, Any],
) -> Any:
    """The AG-UI app the page runs on: as the hook's principal when there is a hook (never
    the page's user header), else as the user the page names (`acting_user`), if any."""
    if authorize is not None:
        return agui_app(network, max_body_bytes=max_body_bytes, authorize=authorize, **where)
    anonymous = agui_app(network, max_body_bytes=max_body_bytes, **where)
    as_user = agui_app(network, max_body_bytes=max_body_bytes, authorize=user_from_header, **where)
    return ByActingUser(anonymous, as_user)


def _routes(views: _Views, runs: Any) -> list[Route | Mount]:
    """The page, its data endpoints and its runs (AG-UI, under /agui). Each data endpoint is
    `/api/<its view's name>`: GET for the reads, POST for the actions."""
    v = views
    reads = (v.graph, v.server, v.threads, v.thread, v.history, v.value, v.memories)
    actions = (v.fork, v.rewind, v.replay)
    return [
        Route("/", views.page, methods=["GET"]),
        Route("/favicon.ico", views.favicon, methods=["GET"]),
        Route("/static/{name}", views.static, methods=["GET"]),
        *(Route(f"/api/{view.__name__}", view, methods=["GET"]) for view in reads),
        *(Route(f"/api/{view.__name__}", view, methods=["POST"]) for view in actions),
        Mount("/agui", app=runs),
    ]


def _asset(name: str) -> bytes:
    return resources.files("network.devui").joinpath("static", name).read_bytes()


def _identifier(request: Request, param: str) -> str:
    """The query parameter `param`, checked by the thread stores' identifier rules."""
    value = request.query_params.get(param)
    if value is None:
        raise _ParamError(422, "missing_parameter", f"query parameter {param!r} is required", param)
    try:
        return check_id(param, value)
    except InvalidIdError as exc:
        raise _ParamError(422, "invalid_parameter", str(exc), param) from exc


def _limit(request: Request) -> int:
    text = request.query_params.get("limit")
    if text is None:
        return DEFAULT_LIST_LIMIT
    limit = limit_in_range(text)
    if limit is None:
        raise _ParamError(
            422,
            "invalid_parameter",
            f"limit must be an integer from 1 to {MAX_LIST_LIMIT}, got {text[:40]!r}",
            "limit",
        )
    return limit


def _step(request: Request) -> int:
    text = request.query_params.get("step", "")
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise _ParamError(422, "invalid_parameter", "step must be an integer >= 0", "step")
    return int(text)


class _Views:
    def __init__(
        self, network: Network, store: Any, access: Access, runs_on_store: bool = False
    ) -> None:
        self.network = network
        self.store = store
        self.access = access
        self.runs_on_store = runs_on_store
        self.page_bytes = _asset("index.html")

    async def page(self, request: Request) -> Response:
        return Response(self.page_bytes, media_type="text/html", headers=SECURITY_HEADERS)

    async def favicon(self, request: Request) -> Response:
        return Response(FAVICON, media_type="image/svg+xml", headers=SECURITY_HEADERS)

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        media_type = STATIC_FILES.get(name)
        if media_type is None:
            return _ParamError(404, "not_found", "no such file").response()
        return Response(_asset(name), media_type=media_type, headers=SECURITY_HEADERS)

    async def memories(self, request: Request) -> Response:
        try:
            limit = _limit(request)
        except _ParamError as error:
            return error.response()
        return await memories_view(request, self.network, self.access, limit)

    async def fork(self, request: Request) -> Response:
        return await fork_view(request, self.network, self.store, self.access)

    async def rewind(self, request: Request) -> Response:
        return await rewind_view(request, self.network, self.store, self.access)

    async def replay(self, request: Request) -> Response:
        return await replay_view(request, self.network, self.store, self.access)

    async def server(self, request: Request) -> Response:
        """What the page adapts to: whether its runs live on the store it lists, and whether
        an `authorize` hook decides who the user is (the page's user field is then unused)."""
        try:
            await self.access.principal(request, None)
        except _ParamError as error:
            return error.response()
        answer = {"runs_on_store": self.runs_on_store, "authorized": not self.access.open}
        return JSONResponse(answer, headers=SECURITY_HEADERS)

    async def graph(self, request: Request) -> Response:
        try:
            await self.access.principal(request, None)
        except _ParamError as error:
            return error.response()
        return JSONResponse(network_graph(self.network), headers=SECURITY_HEADERS)

    async def threads(self, request: Request) -> Response:
        try:
            limit = _limit(request)
            principal = await self.access.principal(request, None)
            only = self.access.user_filter(principal)
        except _ParamError as error:
            return error.response()
        except RequestError as refused:  # an unstorable principal: the hook's fault
            return _ParamError(refused.status, refused.code, refused.message).response()
        try:
            async with reading(self.store) as store:
                infos = (
                    []
                    if store is None
                    else await store.list_threads(app_name=self.network.name, **only)
                )
        except Exception as error:
            return _store_failed("list_threads", error)
        listed = [thread_header(info) for info in infos[:limit]]
        return JSONResponse(
            {"threads": listed, "total": len(infos), "truncated": len(infos) > limit},
            headers=SECURITY_HEADERS,
        )

    async def _load(self, thread_id: str) -> Any:
        async with reading(self.store) as store:
            return None if store is None else await store.get_thread(thread_id)

    async def _stored_thread(
        self, request: Request, thread_id: str, param: str
    ) -> tuple[Any, Response | None]:
        """The stored thread `thread_id` (named by query parameter `param`), or the response
        that says why there is none: the hook's refusal, 404 when the store lacks it or the
        caller may not see it, 500 when the store failed."""
        try:
            principal = await self.access.principal(request, thread_id)
        except _ParamError as error:
            return None, error.response()
        try:
            thread = await self._load(thread_id)
        except Exception as error:
            return None, _store_failed("get_thread", error)
        if thread is None:
            missing = _ParamError(404, "thread_not_found", "no such thread in the store", param)
            return None, missing.response()
        try:
            self.access.check(thread, principal, param)
        except _ParamError as error:
            return None, error.response()
        except RequestError as refused:
            return None, _ParamError(refused.status, refused.code, refused.message).response()
        return thread, None

    async def thread(self, request: Request) -> Response:
        try:
            thread_id = _identifier(request, "id")
        except _ParamError as error:
            return error.response()
        thread, refused = await self._stored_thread(request, thread_id, "id")
        if refused is not None:
            return refused
        try:  # a stored record that does not decode fails here, when it is first read
            replay = thread_replay(thread)
        except Exception as error:
            return _store_failed("decode_thread", error)
        return JSONResponse(replay, headers=SECURITY_HEADERS)

    async def history(self, request: Request) -> Response:
        try:
            thread_id = _identifier(request, "thread")
            key = _identifier(request, "key")  # a state key: the same rules as an id
        except _ParamError as error:
            return error.response()
        thread, refused = await self._stored_thread(request, thread_id, "thread")
        if refused is not None:
            return refused
        try:  # as in `thread`: records are decoded when first read
            writes = history(thread, key)
        except Exception as error:
            return _store_failed("decode_thread", error)
        return JSONResponse(
            {"thread_id": thread_id, "key": key, "writes": writes}, headers=SECURITY_HEADERS
        )

    async def value(self, request: Request) -> Response:
        try:
            thread_id = _identifier(request, "thread")
            step = _step(request)
            part = request.query_params.get("part", "")
            if part not in PARTS:
                raise _ParamError(
                    422, "invalid_parameter", f"part must be one of {', '.join(PARTS)}", "part"
                )
            call_id = _identifier(request, "call") if part in ("arguments", "result") else None
        except _ParamError as error:
            return error.response()
        thread, refused = await self._stored_thread(request, thread_id, "thread")
        if refused is not None:
            return refused
        try:
            text = whole_value(thread, step, part, call_id)
        except Exception as error:
            return _store_failed("decode_thread", error)
        if text is None:
            key = "call" if call_id is not None and step < len(thread.results) else "step"
            return _ParamError(404, "not_found", f"no such {key} in the thread", key).response()
        headers = dict(SECURITY_HEADERS)
        if request.query_params.get("download") == "1":
            name = f"step-{step}-{part}.txt"
            headers["content-disposition"] = f'attachment; filename="{name}"'
        return Response(text, media_type="text/plain; charset=utf-8", headers=headers)
