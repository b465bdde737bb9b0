"""Key scopes, told apart by prefix (Google ADK's convention).

- no prefix: the run, or the thread when the run is persisted;
- `user:`: every thread of the same user within the app;
- `app:`: every user of the app;
- `temp:`: this run only; visible to every agent and tool, never serialized or persisted.
"""

from __future__ import annotations

from typing import Literal

Scope = Literal["thread", "user", "app", "temp"]

USER_PREFIX = "user:"
APP_PREFIX = "app:"
TEMP_PREFIX = "temp:"


def scope_of(key: str) -> Scope:
    """The scope a key belongs to, from its prefix."""
    if key.startswith(TEMP_PREFIX):
        return "temp"
    if key.startswith(USER_PREFIX):
        return "user"
    if key.startswith(APP_PREFIX):
        return "app"
    return "thread"


def is_persistent(key: str) -> bool:
    """False for `temp:` keys, which never leave the run."""
    return not key.startswith(TEMP_PREFIX)


def json_pointer(key: str) -> str:
    """The RFC 6901 pointer of a top-level key (`~` as `~0`, `/` as `~1`)."""
    return "/" + key.replace("~", "~0").replace("/", "~1")


def key_of_path(path: str) -> tuple[str, bool]:
    """The top-level key a JSON Pointer into the state's JSON form starts with, and whether
    the pointer is the key's own (`/key`) rather than a path inside its value."""
    head, inside, _ = path[1:].partition("/")
    return head.replace("~1", "/").replace("~0", "~"), not inside


def keys_held(ops: list[dict[str, object]]) -> dict[str, bool]:
    """The top-level keys `ops` touch, in order, each with whether a copy that applied them
    holds the key afterwards (a key's own `remove` is the only op that leaves it absent)."""
    held: dict[str, bool] = {}
    for op in ops:
        key, own = key_of_path(str(op["path"]))
        held[key] = not (own and op["op"] == "remove")
    return held
