"""The `store=` option wherever a run's thread store is named: checked when it is given.

A `ThreadRef` and a `SharedBudget` take a thread store, a database URL or an SQLite path. A
store that is none of these used to be refused only when a run first opened it, far from the
line that gave it; it is refused where it is given, naming the field. The thread stores are a
layer above this one, so a store object is recognised by the `ThreadStore` protocol's
methods (`STORE_METHODS`, kept equal to the protocol by a test), as the run's own
`isinstance` check recognises it.
"""

from __future__ import annotations

import os
from typing import Any

from network.errors import ConfigurationError

STORE_METHODS = (
    "create_thread",
    "get_thread",
    "list_threads",
    "delete_thread",
    "get_results",
    "append_user_message",
    "append_results",
    "close",
)


def check_store(field: str, store: Any) -> Any:
    """A `store=` option: None, a database URL or SQLite path (not blank, no NUL, with a
    form the file system takes), or an object with a thread store's methods; else a
    `ConfigurationError` naming `field`. A thread store is checked by its methods here (the
    thread stores are a layer above); the run opens it as a thread would."""
    if store is None:
        return store
    wanted = "a thread store, a database URL or an SQLite file path"
    if isinstance(store, str | os.PathLike):
        text = os.fspath(store)
        if not isinstance(text, str) or not text.strip() or "\x00" in text:
            raise ConfigurationError(f"{field} must be {wanted}, got {store!r}")
        try:
            os.fsencode(text)
        except UnicodeEncodeError as exc:
            raise ConfigurationError(
                f"{field} must be {wanted}; {store!r} has a lone surrogate at {exc.start}, "
                "which no file name or URL holds"
            ) from None
        return store
    if isinstance(store, type):  # `store=MemoryStore`: its methods are there, unbound
        raise ConfigurationError(
            f"{field} must be {wanted}, got the class {store.__name__}: give an instance "
            f"({store.__name__}(...))"
        )
    missing = [name for name in STORE_METHODS if not callable(getattr(store, name, None))]
    if missing:
        raise ConfigurationError(
            f"{field} must be {wanted}, got {store!r} (a {type(store).__name__}, which has no "
            f"{missing[0]} method)"
        )
    return store


__all__ = ["STORE_METHODS", "check_store"]
