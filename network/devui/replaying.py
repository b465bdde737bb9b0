"""Replay a stored thread from the page: `POST /api/replay`.

It calls the network's own `replay` (`network.capabilities.replay`), so the page shows what
`agent-network replay` prints: each step matched or diverged, and the first divergence's
diff. The stored thread is only read; the replay runs on a thread of its own, in memory.

The body is hostile JSON, checked like time travel's (`branching.read_json`):
`{"thread": T, "tools"?: "recorded"|"live", "on_divergence"?: "stop"|"live"|"continue",
"routing"?: "today"|"recorded"}`. Tools default to "recorded" here, as on the command line:
a button on a page runs no side effect unless asked. The answer is the report's JSON form
with its text (`"text"`, what `render()` gives). Refusals: 415, 413, 422 naming the field (or
`replay_refused` for a thread with nothing to replay), 404 for an unknown thread, 500
`store_failed` (a reference only) when the store fails or a replayed run raises something the
report cannot hold.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from network.devui.access import Access
from network.devui.branching import callers_thread, read_json, thread_field, thread_refusal
from network.devui.http_errors import SECURITY_HEADERS, ParamError, store_failed
from network.errors import ConfigurationError, InvalidIdError
from network.network import Network

CHOICES = {
    "tools": ("recorded", "live"),
    "on_divergence": ("stop", "live", "continue"),
    "routing": ("today", "recorded"),
}
DEFAULTS = {"tools": "recorded", "on_divergence": "stop", "routing": "today"}
MAX_BODY_BYTES = 64 * 1024  # a thread id and three words


def _options(body: dict[str, Any]) -> dict[str, str]:
    options: dict[str, str] = {}
    for field, allowed in CHOICES.items():
        value = body.get(field, DEFAULTS[field])
        if value not in allowed:
            said = ", ".join(allowed)
            raise ParamError(422, "invalid_parameter", f"{field} must be one of {said}", field)
        options[field] = value
    return options


def _refusal(error: Exception) -> Response:
    answer = thread_refusal(error)
    if answer is not None:
        return answer
    if isinstance(error, ConfigurationError | InvalidIdError):
        return ParamError(422, "replay_refused", str(error)).response()
    return store_failed("replay", error)


async def replay_view(request: Request, network: Network, store: Any, access: Access) -> Response:
    """`POST /api/replay`: today's network against a stored thread; the report."""
    try:
        body = await read_json(request, MAX_BODY_BYTES)
        thread_id = thread_field(body)
        options = _options(body)
    except ParamError as error:
        return error.response()
    try:
        async with callers_thread(store, access, request, thread_id) as thread:
            report = await network.replay(
                thread,
                tools=options["tools"],  # type: ignore[arg-type]
                on_divergence=options["on_divergence"],  # type: ignore[arg-type]
                routing=options["routing"],  # type: ignore[arg-type]
            )
    except Exception as error:
        return _refusal(error)
    answer = report.to_dict()
    answer["text"] = report.render()
    return JSONResponse(answer, headers=SECURITY_HEADERS)
