"""The state a client sends, checked before anything runs.

The client sends its whole copy of the state with every request. What it *writes* is what
differs from what the server last showed it (`ThreadRecord.client_view`): a key it added, or
a value it changed. A key it omits is left alone (a client that never saw a key does not
delete it). Keys equal to the server's view are not writes, so an echoed `app:` key or an
optimistic proposal is not mistaken for one.

What a client may write (unprefixed and `user:` keys, never `app:` or `temp:`) is the
serving layer's rule (`network.serving.client_writes`); every write is then validated by the
network's schema (`network.serving.admission.checked_state`), the first invalid one refusing
the whole request, naming the key.
"""

from __future__ import annotations

from typing import Any

from network.serving.errors import RequestError


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
