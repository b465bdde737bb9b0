"""The state a client sends, checked before anything runs.

The client sends its whole copy of the state with every request. What it *writes* is what
differs from what the server last showed it (`ThreadRecord.client_view`): a key it added, or
a value it changed. A key it omits is left alone (a client that never saw a key does not
delete it). Keys equal to the server's view are not writes, so an echoed `app:` key or an
optimistic proposal is not mistaken for one. Equal as the client read them: a JavaScript
client holds a number as a double, so an integer beyond 2**53 (a 64-bit id, a nanosecond
time) comes back rounded; it is the value it was shown, not a write (which would have
rounded the server's value, or been refused as a write to an `app:` key on every request).

What a client may write (unprefixed and `user:` keys, never `app:` or `temp:`) is the
serving layer's rule (`network.serving.client_writes`); every write is then validated by the
network's schema (`network.serving.admission.checked_state`), the first invalid one refusing
the whole request, naming the key.
"""

from __future__ import annotations

from typing import Any

from network.serving.errors import RequestError

EXACT = 2**53  # a double holds every integer up to this exactly


def client_writes(client_state: Any, view: dict[str, Any]) -> dict[str, Any]:
    """The keys the client changed relative to `view`, with their new values."""
    if client_state is None:
        return {}
    if not isinstance(client_state, dict):
        raise RequestError(
            422, "invalid_state", f"state must be a JSON object, got {type(client_state).__name__}"
        )
    missing = object()
    return {
        key: value
        for key, value in client_state.items()
        if (shown := view.get(key, missing)) != value
        and (shown is missing or not read_as(shown, value))
    }


def read_as(shown: Any, held: Any) -> bool:
    """Whether a client that was shown `shown` (JSON data) may hold it as `held`: equal but
    for integers beyond 2**53, which a double holds rounded (`2**60 + 1` comes back as
    `1152921504606847000`), and ones past a double's range, which JSON.parse reads as
    Infinity and JSON.stringify writes back as null. Walked without recursion."""
    pending = [(shown, held)]
    while pending:
        server, client = pending.pop()
        if type(server) is int and not -EXACT <= server <= EXACT:
            if type(client) not in (int, float, type(None)):
                return False
            try:
                as_double = float(server)
            except OverflowError:  # past a double's range: the client read Infinity
                if client is not None:
                    return False
                continue
            try:
                if client is None or as_double != float(client):
                    return False
            except OverflowError:
                return False
        elif isinstance(server, dict):
            if not isinstance(client, dict) or server.keys() != client.keys():
                return False
            pending.extend((value, client[key]) for key, value in server.items())
        elif isinstance(server, list):
            if not isinstance(client, list) or len(server) != len(client):
                return False
            pending.extend(zip(server, client, strict=True))
        elif server != client:
            return False
    return True
