"""Fork and rewind a stored thread from the page: `POST /api/fork` and `POST /api/rewind`.

Both call the network's own `fork` / `rewind` (network/threads/time_travel.py), so every rule
of time travel holds: the thread must be this network's, a fork's `update` is validated through
the schema key by key (a bad value changes nothing and names the key), and a rewind keeps the
thread as it was under a new id and reports the tool calls whose side effects were not undone.

The bodies are hostile JSON: `application/json` only (any other type can be sent cross-site
without a CORS preflight), bounded in size, no NaN or infinity, and every field checked:

- fork: `{"thread": T, "at": N, "update": {key: value, ...}?}`, answered with the new
  thread's id, its origin, the keys the update set and the shared keys written after the
  checkpoint;
- rewind: `{"thread": T, "to": N}`, answered with the rewind's report.

Refusals have the dev server's error shape: 415 for another content type, 413 for a body too
large, 422 naming the field (or the state key) at fault, 404 for an unknown thread or
checkpoint, 500 `store_failed` (with a reference only) when the store fails.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from network.devui.access import Access
from network.devui.http_errors import SECURITY_HEADERS, ParamError, store_failed
from network.devui.store_access import reading
from network.errors import InvalidIdError, StateError
from network.network import Network
from network.run.thread_ref import ThreadRef
from network.serving.errors import RequestError
from network.serving.limits import declared_over
from network.threads.checkpoint_data import CheckpointNotFoundError, TimeTravelError
from network.threads.ids import check_id
from network.threads.protocol import ThreadNotFoundError

MAX_BODY_BYTES = 16 * 1024 * 1024  # an edited state may hold a large value
MAX_CHECKPOINT = 10**9


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


async def read_json(request: Request, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The request's JSON object, or the `ParamError` that says why not."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise ParamError(415, "unsupported_media_type", "request body must be application/json")
    too_large = ParamError(
        413, "body_too_large", f"request body is larger than the limit of {limit} bytes"
    )
    if declared_over(request.headers.get("content-length", ""), limit):
        raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks), parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise ParamError(422, "invalid_request", "request body is not valid JSON") from exc
    if not isinstance(body, dict):
        raise ParamError(422, "invalid_request", "request body must be a JSON object")
    return body


def thread_field(body: dict[str, Any]) -> str:
    """The body's `thread`: a thread id, checked (a `ParamError` naming it otherwise)."""
    value = body.get("thread")
    if not isinstance(value, str):
        raise ParamError(
            422, "invalid_parameter", "thread must be a thread id (a string)", "thread"
        )
    try:
        return check_id("thread", value)
    except InvalidIdError as exc:
        raise ParamError(422, "invalid_parameter", str(exc), "thread") from exc


def _checkpoint(body: dict[str, Any], field: str) -> int:
    value = body.get(field)
    # bool is an int to Python, not a checkpoint; negative numbers count from the end in the
    # library, but the page always names a step by its index
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_CHECKPOINT:
        raise ParamError(
            422, "invalid_parameter", f"{field} must be a step index (an integer >= 0)", field
        )
    return value


async def _travel_request(request: Request, field: str) -> tuple[dict[str, Any], str, int]:
    """A fork's or a rewind's body, its thread id and its checkpoint field `field`."""
    body = await read_json(request)
    return body, thread_field(body), _checkpoint(body, field)


def _update(body: dict[str, Any]) -> dict[str, Any] | None:
    value = body.get("update")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ParamError(
            422, "invalid_parameter", "update must be an object of state keys", "update"
        )
    return value


def thread_refusal(error: Exception) -> Response | None:
    """The answer to an error any request on a stored thread may meet: the caller's hook
    refused or the thread is not the caller's, the serving layer refused, no such thread.
    None for another error."""
    if isinstance(error, ParamError):
        return error.response()
    if isinstance(error, RequestError):
        return ParamError(error.status, error.code, error.message).response()
    if isinstance(error, ThreadNotFoundError):
        return ParamError(
            404, "thread_not_found", "no such thread in the store", "thread"
        ).response()
    return None


def _refusal(error: Exception, checkpoint_field: str) -> Response:
    """The answer to an error of `network.fork` / `network.rewind`."""
    answer = thread_refusal(error)
    if answer is not None:
        return answer
    if isinstance(error, CheckpointNotFoundError):
        return ParamError(404, "checkpoint_not_found", str(error), checkpoint_field).response()
    if isinstance(error, StateError):  # the schema's: names the key
        return ParamError(422, "invalid_state", str(error), error.key or "update").response()
    if isinstance(error, TimeTravelError | InvalidIdError):
        return ParamError(422, "time_travel_refused", str(error)).response()
    return store_failed("time_travel", error)


@contextlib.asynccontextmanager
async def callers_thread(
    store: Any, access: Access, request: Request, thread_id: str
) -> AsyncIterator[ThreadRef]:
    """Stored thread `thread_id`, on the store opened for this request, once the caller may
    act on it (with an `authorize` hook: its own threads only); ThreadNotFoundError when
    there is no store yet."""
    async with reading(store) as opened:
        if opened is None:
            raise ThreadNotFoundError(thread_id)
        principal = await access.principal(request, thread_id)
        if not access.open:
            access.check(await opened.get_thread(thread_id), principal, "thread")
        yield ThreadRef(thread_id, store=opened)


async def fork_view(request: Request, network: Network, store: Any, access: Access) -> Response:
    """`POST /api/fork`: a new thread from a stored one at a step, plus an edited state."""
    try:
        body, thread_id, at = await _travel_request(request, "at")
        update = _update(body)
    except ParamError as error:
        return error.response()
    try:
        async with callers_thread(store, access, request, thread_id) as thread:
            forked = await network.fork(thread, at=at, update=update)
    except Exception as error:
        return _refusal(error, "at")
    answer = {
        "thread_id": forked.thread.thread_id,
        "origin": forked.origin.model_dump(mode="json"),
        "shared_keys": forked.model_dump(mode="json")["shared_keys"],
        "updated": sorted(update or {}),  # the keys the edit set (no agent call records them)
    }
    return JSONResponse(answer, headers=SECURITY_HEADERS)


async def rewind_view(request: Request, network: Network, store: Any, access: Access) -> Response:
    """`POST /api/rewind`: move a stored thread back to a step, in place."""
    try:
        _body, thread_id, to = await _travel_request(request, "to")
    except ParamError as error:
        return error.response()
    try:
        async with callers_thread(store, access, request, thread_id) as thread:
            report = await network.rewind(thread, to=to)
    except Exception as error:
        return _refusal(error, "to")
    return JSONResponse(report.model_dump(mode="json"), headers=SECURITY_HEADERS)
