"""The process's DBOS engine: configured and launched once, with the networks it may run.

DBOS keeps global state: one instance per process, and workflow functions registered before
launch. This module owns that state so the rest of the library never touches it directly:

- `launch(networks, db=...)` registers the one workflow this library defines
  (`agent_network.run`, which runs any registered network by name), configures DBOS on the
  system database `db` and launches it. At launch DBOS resumes the runs this process left
  unfinished (the same executor id: "local" unless a worker names itself), so every network
  such a run may need must be given here, not later.
- A second `launch` on the same database only adds networks; on another database it is a
  `DurableConfigError` (call `shutdown()` first: DBOS cannot serve two databases at once).
- A process that is not a worker listens to no queue: queued runs go to workers only.

`dbos` is imported inside these functions, never when `network` or `network.durable` is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from network.errors import ConfigurationError

APP_NAME = "agent-network"
"""The DBOS application name every process of this library uses (workers, clients, runs)."""
APP_VERSION = "agent-network-durable-1"
"""Pinned, so that any process running this library recovers and dequeues any other's runs
(DBOS would otherwise derive a version from the workflow's source code)."""
WORKFLOW_NAME = "agent_network.run"
QUEUE_NAME = "agent-network"
DEFAULT_DB = "sqlite:///agent-network-durable.sqlite"


class DurableConfigError(ConfigurationError):
    """Durable runs are misconfigured: no extra installed, a second database, an unknown network."""


@dataclass
class Engine:
    """What this process launched: its database and the networks it runs by name."""

    db: str
    networks: dict[str, Any] = field(default_factory=dict)
    worker: bool = False
    executor_id: str | None = None


_engine: Engine | None = None
_workflow: Any = None  # the registered workflow function (registered once per process)


def system_database_url(db: str | None) -> str:
    """DBOS's SQLAlchemy URL for `db` (an async driver named in it is dropped: DBOS is sync)."""
    url = db or DEFAULT_DB
    if not isinstance(url, str):
        raise DurableConfigError(f"db must be a database URL string, got {url!r}")
    for prefix in ("postgresql", "postgres", "sqlite"):
        if url.startswith(prefix):
            scheme, _, rest = url.partition("://")
            base = "postgresql" if scheme.startswith("postgres") else "sqlite"
            return f"{base}://{rest}"
    raise DurableConfigError(f"db must be a sqlite:// or postgresql:// URL, got {url!r}")


def _dbos() -> Any:
    try:
        import dbos  # noqa: PLC0415 (dbos is optional and heavy)
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise DurableConfigError(
            "durable runs need DBOS: pip install 'agent-network[durable]'"
        ) from exc
    return dbos


def _register_workflow() -> Any:
    global _workflow
    if _workflow is None:
        dbos = _dbos()
        from network.durable.workflow import run_workflow  # noqa: PLC0415 (dbos is optional and heavy)

        _workflow = dbos.DBOS.workflow(name=WORKFLOW_NAME)(run_workflow)
    return _workflow


def launch(
    networks: Iterable[Any],
    *,
    db: str | None = None,
    worker: bool = False,
    worker_concurrency: int | None = None,
    executor_id: str | None = None,
) -> Engine:
    """Configure and launch DBOS for this process (once), with the networks it may run.

    Args:
        networks: every network this process runs durably, or resumes (by name).
        db: the DBOS system database: `sqlite:///file` (default
            `sqlite:///agent-network-durable.sqlite`) or `postgresql://...` (needed to share
            runs between processes and machines).
        worker: take runs from the queue (`agent-network worker` sets it).
        worker_concurrency: the most queued runs this process runs at once (workers only).
        executor_id: this process's DBOS executor id (workers get a unique one).
    """
    global _engine
    url = system_database_url(db)
    named = _by_name(networks)
    if _engine is not None:
        if _engine.db != url or worker != _engine.worker:
            raise DurableConfigError(
                f"durable runs are already launched on {_redact(_engine.db)}; "
                "call network.durable.shutdown() before launching on another database"
            )
        _engine.networks.update(named)
        return _engine
    if worker_concurrency is not None and (
        not isinstance(worker_concurrency, int) or worker_concurrency < 1
    ):
        raise DurableConfigError(f"worker_concurrency must be >= 1, got {worker_concurrency!r}")
    dbos = _dbos()
    _register_workflow()
    engine = Engine(url, named, worker, executor_id)
    _engine = engine  # before launch: DBOS resumes unfinished runs as it launches
    config: dict[str, Any] = {
        "name": APP_NAME,
        "system_database_url": url,
        "application_version": APP_VERSION,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.05,
    }
    if executor_id is not None:
        config["executor_id"] = executor_id
    try:
        dbos.DBOS(config=config)
        dbos.DBOS.listen_queues([QUEUE_NAME] if worker else [])
        dbos.DBOS.launch()
        if worker:
            dbos.DBOS.register_queue(
                QUEUE_NAME,
                worker_concurrency=worker_concurrency,
                polling_interval_sec=0.2,
                on_conflict="always_update",
            )
    except BaseException:
        _engine = None
        dbos.DBOS.destroy(destroy_registry=False)
        raise
    return engine


def launched() -> Engine | None:
    """The engine this process launched, if any."""
    return _engine


def network_named(name: str) -> Any:
    """The registered network `name` (a run resumed here needs it)."""
    engine = _engine
    network = engine.networks.get(name) if engine is not None else None
    if network is None:
        known = ", ".join(engine.networks) if engine is not None else "none"
        raise DurableConfigError(
            f"no network named {name!r} was given to network.durable.launch (known: {known})"
        )
    return network


def shutdown() -> None:
    """Stop DBOS in this process (runs in flight stop; they resume at the next launch)."""
    global _engine
    if _engine is None:
        return
    _engine = None
    _dbos().DBOS.destroy(destroy_registry=False)


def _by_name(networks: Iterable[Any]) -> dict[str, Any]:
    named: dict[str, Any] = {}
    for network in networks:
        name = getattr(network, "name", None)
        if not isinstance(name, str) or not callable(getattr(network, "run", None)):
            raise DurableConfigError(f"{network!r} is not a network")
        other = named.get(name)
        if other is not None and other is not network:
            raise DurableConfigError(f"two networks are named {name!r}")
        named[name] = network
    return named


def _redact(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.split("@", 1)[1]
    return scheme + sep + rest
