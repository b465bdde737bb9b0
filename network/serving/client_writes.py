"""What a client may write to a thread's state, whatever its protocol.

A client may write unprefixed (thread) keys and `user:` keys (its own user's, shared with its
other threads on a store). Writes to `app:` keys (shared by every user of the app) and
`temp:` keys (they never leave a run) are refused with 403 `state_key_not_writable`, naming
the key, before anything runs. Every write is then validated by the network's schema when
the run starts (`network.serving.admission.checked_state`).
"""

from __future__ import annotations

from collections.abc import Iterable

from network.serving.errors import RequestError
from network.state.scopes import scope_of

WRITABLE_SCOPES = ("thread", "user")


def check_scopes(keys: Iterable[str]) -> None:
    """Refuse writes to keys a client may not write (`app:`, `temp:`)."""
    for key in keys:
        scope = scope_of(key)
        if scope not in WRITABLE_SCOPES:
            raise RequestError(
                403,
                "state_key_not_writable",
                f"state key {key!r} cannot be written by a client: {scope}: keys are "
                "server-side (a client may write unprefixed and user: keys)",
                key=key,
            )
