"""A network's router checked when it is given: callable, and callable as `router(ctx)`.

A router taking no parameter (or two it needs) used to be taken and fail at the run's first
routing decision with a `TypeError` from inside the loop; it is refused when the network is
built, or when `network.router` is set, with a `ConfigurationError` naming the router.
"""

from __future__ import annotations

from typing import Any

from network.errors import ConfigurationError
from network.one_argument import refused_as_one_argument
from network.run.context import Router


def checked_router(network: str, router: Any) -> Router:
    """`router` when it can be called as `router(ctx)`, else `ConfigurationError`."""
    if not callable(router):
        raise ConfigurationError(f"network {network!r}: router {router!r} is not callable")
    shown = refused_as_one_argument(router)
    if shown is not None:
        raise ConfigurationError(
            f"network {network!r}: router {shown} cannot be called as router(ctx): "
            "a router takes the run context, one positional parameter"
        )
    return router  # type: ignore[no-any-return]
