"""An `authorize` hook for the command-line tests (`--authorize FILE:FUNCTION`)."""

from __future__ import annotations

from typing import Any

from network.serving.principals import Unauthorized

TOKENS = {"Bearer token-alice": "alice", "Bearer token-bob": "bob"}


def authorize(request: Any, thread_id: str | None) -> str:
    user = TOKENS.get(request.headers.get("authorization", "") if request else "")
    if user is None:
        raise Unauthorized("a bearer token is needed")
    return user


def no_arguments() -> str:
    """Not a hook: `authorize(request, thread_id)` cannot call it."""
    return "alice"
