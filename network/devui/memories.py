"""`/api/memories`: a user's long-term memories, as the network's agents with memory see them.

For each agent given `memory=` (`agents.capabilities.memory`), the namespace a run of that
user reads (`Memory.namespace_of`, for a run of this network's app) is listed from its store,
the latest written first; agents sharing a store and a namespace are listed once. The page
shows them beside the run, marking those the run recalled (its CUSTOM `MemoryRecalled` event).

Whose: without an `authorize` hook (a local tool), the user the page names (`?user=`, by the
thread stores' identifier rules; empty or missing: the anonymous user, who has none); with a
hook, its principal, never the page's parameter. `limit` bounds each namespace's list. A store
that fails is a 500 `store_failed` (the page learns nothing of the error).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from network.devui.access import Access
from network.devui.http_errors import SECURITY_HEADERS, ParamError, store_failed
from network.errors import InvalidIdError
from network.network import Network
from network.run.context import RunBookkeeping, RunContext
from network.serving.errors import RequestError
from network.serving.principals import store_user
from network.threads.ids import check_id

__all__ = ["memories_view"]


async def memories_view(request: Request, network: Network, access: Access, limit: int) -> Response:
    """The memories of the caller's user (see the module docstring)."""
    try:
        principal = await access.principal(request, None)
        user = _user(request) if access.open else store_user(principal)
    except ParamError as error:
        return error.response()
    except RequestError as refused:  # an unstorable principal: the hook's fault
        return ParamError(refused.status, refused.code, refused.message).response()
    listed: list[dict[str, Any]] = []
    seen: set[tuple[int, tuple[str, ...]]] = set()
    run = RunContext(
        network=network, state=network.new_state(), input="", run_id="devui",
        engine=RunBookkeeping(user_id=user, app_name=network.name),
    )  # fmt: skip
    for name, agent in network.agents.items():
        memory = getattr(agent, "memory", None)
        if memory is None or not user:
            continue
        namespace = memory.namespace_of(run)
        if namespace is None or (id(memory.store), tuple(namespace)) in seen:
            continue
        seen.add((id(memory.store), tuple(namespace)))
        try:
            items = await memory.store.list(namespace, limit=limit)
        except Exception as error:
            return store_failed("list_memories", error)
        listed += [
            {
                "agent": name,
                "namespace": list(item.namespace),
                "key": item.key,
                "text": item.text,
                "metadata": dict(item.metadata),
                "updatedAt": item.updated_at,
                "expiresAt": item.expires_at,
                "threadId": item.thread_id,
            }
            for item in items
        ]
    return JSONResponse({"user": user, "memories": listed}, headers=SECURITY_HEADERS)


def _user(request: Request) -> str:
    value = request.query_params.get("user", "")
    if not value:
        return ""
    try:
        return check_id("user", value)
    except InvalidIdError as exc:
        raise ParamError(422, "invalid_parameter", str(exc), "user") from exc
