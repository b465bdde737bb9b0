"""The state a client sends, checked before anything runs.

The client sends its whole copy of the state with every request. What it *writes* is what
differs from what the server last showed it (`ThreadRecord.client_view`): a key it added, or
a value it changed. A key it omits is left alone (a client that never saw a key does not
delete it). Keys equal to the server's view are not writes, so an echoed `app:` key or an
optimistic proposal is not mistaken for one.

A client may write unprefixed (thread) keys and `user:` keys. Writes to `app:` keys (shared
by every user) and `temp:` keys (never leave a run) are refused. Every write is validated by
the network's schema; the first invalid one refuses the whole request, naming the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from network.agui.errors import RequestError
from network.errors import StateError
from network.state.scopes import scope_of
from network.state.state import State

if TYPE_CHECKING:
    from network.continuing import RunnableNetwork

WRITABLE_SCOPES = ("thread", "user")


def client_writes(client_state: Any, view: dict[str, Any]) -> dict[str, Any]:
    """The keys the client changed relative to `view`, with their new values."""
    if client_state is None:
        return {}
    if not isinstance(client_state, dict):
        raise RequestError(
            422, "invalid_state", f"state must be a JSON object, got {type(client_state).__name__}"
        )
    missing = object()
    return {key: value for key, value in client_state.items() if view.get(key, missing) != value}


def check_scopes(writes: dict[str, Any]) -> None:
    """Refuse writes to keys a client may not write (`app:`, `temp:`)."""
    for key in writes:
        scope = scope_of(key)
        if scope not in WRITABLE_SCOPES:
            raise RequestError(
                403,
                "state_key_not_writable",
                f"state key {key!r} cannot be written by a client: {scope}: keys are "
                "server-side (a client may write unprefixed and user: keys)",
                key=key,
            )


def build_state(network: RunnableNetwork, data: dict[str, Any]) -> State:
    """A fresh State seeded with `data`, or a 422 `RequestError` naming the invalid key."""
    try:
        return network.new_state(data)
    except StateError as exc:
        raise RequestError(422, "invalid_state", str(exc), key=exc.key) from exc
