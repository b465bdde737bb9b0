"""The process-wide state of durable runs: what DBOS was launched with, and its networks.

DBOS itself is global to the process; so is this (`network.durable.engine` sets it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from network.errors import ConfigurationError


class DurableConfigError(ConfigurationError):
    """Durable runs are misconfigured: no extra installed, a second database, an unknown network."""


@dataclass
class Engine:
    """What this process launched: its database and the networks it runs by name."""

    db: str
    networks: dict[str, Any] = field(default_factory=dict)
    worker: bool = False
    executor_id: str | None = None


class Process:
    """Holder of the one engine this process launched (None until `launch`)."""

    engine: Engine | None = None


def network_named(name: str) -> Any:
    """The registered network `name` (a run resumed here needs it)."""
    engine = Process.engine
    network = engine.networks.get(name) if engine is not None else None
    if network is None:
        known = ", ".join(engine.networks) if engine is not None else "none"
        raise DurableConfigError(
            f"no network named {name!r} was given to network.durable.launch (known: {known})"
        )
    return network
