"""`run_leases(store)`: the run leases of a thread store (see `network.threads.leases`).

`MemoryStore` and any store without leases of its own get leases kept in this process;
`SQLStore` gets its `run_leases` table (`network.threads.sql_leases`, imported only then);
a store of your own may provide `run_leases()` returning a `RunLeases`. Each store keeps one
leases object for its lifetime.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from network.errors import ConfigurationError
from network.threads.leases import MemoryLeases, RunLeases

T = TypeVar("T")

_ATTACHED: weakref.WeakKeyDictionary[Any, RunLeases] = weakref.WeakKeyDictionary()


def run_leases(store: Any) -> RunLeases:
    """The run leases of `store` (see the module docstring)."""
    own = getattr(store, "run_leases", None)
    if callable(own):
        leases = own()
        if not isinstance(leases, RunLeases):
            raise ConfigurationError(
                f"{type(store).__name__}.run_leases() must return an object with claim, renew "
                f"and release, got {leases!r}"
            )
        return leases
    return kept_with(store, _ATTACHED, _sql_leases, MemoryLeases)


def kept_with(
    store: Any,
    kept: weakref.WeakKeyDictionary[Any, T],
    on_sql: Callable[[Any], T],
    elsewhere: Callable[[], T],
) -> T:
    """The object `kept` holds for `store` for its lifetime, made on first use: `on_sql(store)`
    for an `SQLStore` (so a module that needs SQLAlchemy is imported only then), else
    `elsewhere()` (kept in this process)."""
    found = kept.get(store)
    if found is None:
        sql = type(store).__name__ == "SQLStore" and hasattr(store, "engine")
        found = on_sql(store) if sql else elsewhere()
        kept[store] = found
    return found


def _sql_leases(store: Any) -> RunLeases:
    from network.threads.sql_leases import SQLLeases  # noqa: PLC0415 (sqlalchemy)

    return SQLLeases(store)
