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
    return {
        key: value
        for key, value in client_state.items()
        if (shown := view.get(key, missing)) != value and not read_back(shown, value)
    }


def read_back(shown: Any, sent: Any) -> bool:
    """Whether `sent` is `shown` as a JavaScript client reads JSON back: its numbers are
    doubles, so an int past 2**53 returns rounded (`2**60 + 1` as `1152921504606847000`),
    and one past a double's range as null (JSON.parse reads it as Infinity, which
    JSON.stringify writes as null). Without this, a browser echoing the state it was sent
    wrote the rounded number over the server's (an `app:` key's echo was refused, 403, on
    every later run of the thread)."""
    if type(shown) is int and abs(shown) > 2**53 and type(sent) in (int, float, type(None)):
        try:
            as_double = float(shown)
        except OverflowError:  # past a double: the client read Infinity
            return sent is None
        return sent is not None and as_double == float(sent)
    if isinstance(shown, dict) and isinstance(sent, dict):
        return shown.keys() == sent.keys() and all(
            shown[key] == sent[key] or read_back(shown[key], sent[key]) for key in shown
        )
    if isinstance(shown, list) and isinstance(sent, list):
        return len(shown) == len(sent) and all(
            a == b or read_back(a, b) for a, b in zip(shown, sent, strict=True)
        )
    return False
