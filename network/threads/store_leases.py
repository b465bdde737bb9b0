"""`run_leases(store)`: the run leases of a thread store (see `network.threads.leases`).

`MemoryStore` and any store without leases of its own get leases kept in this process;
`SQLStore` gets its `run_leases` table (`network.threads.sql_leases`, imported only then);
a store of your own may provide `run_leases()` returning a `RunLeases`. Each store keeps one
leases object for its lifetime.
"""

from __future__ import annotations

import weakref
from typing import Any

from network.errors import ConfigurationError
from network.threads.leases import MemoryLeases, RunLeases

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
    found = _ATTACHED.get(store)
    if found is None:
        if type(store).__name__ == "SQLStore" and hasattr(store, "engine"):
            from network.threads.sql_leases import SQLLeases  # noqa: PLC0415 (sqlalchemy)

            found = SQLLeases(store)
        else:
            found = MemoryLeases()
        _ATTACHED[store] = found
    return found
