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
from typing import Any

from network.durable.process import DurableConfigError, Engine, Process
from network.durable.sqlite_journal import use_write_ahead_log
from network.durable.step_table import close_step_tables

APP_NAME = "agent-network"
"""The DBOS application name every process of this library uses (workers, clients, runs)."""
APP_VERSION = "agent-network-durable-1"
"""Pinned, so that any process running this library recovers and dequeues any other's runs
(DBOS would otherwise derive a version from the workflow's source code)."""
WORKFLOW_NAME = "agent_network.run"
QUEUE_NAME = "agent-network"
DEFAULT_DB = "sqlite:///agent-network-durable.sqlite"


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


def registered_workflow() -> Any:
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
    url = system_database_url(db)
    named = _by_name(networks)
    if Process.engine is not None:
        if Process.engine.db != url or worker != Process.engine.worker:
            raise DurableConfigError(
                f"durable runs are already launched on {_redact(Process.engine.db)}; "
                "call network.durable.shutdown() before launching on another database"
            )
        Process.engine.networks.update(named)
        return Process.engine
    if worker_concurrency is not None and (
        not isinstance(worker_concurrency, int) or worker_concurrency < 1
    ):
        raise DurableConfigError(f"worker_concurrency must be >= 1, got {worker_concurrency!r}")
    dbos = _dbos()
    registered_workflow()
    engine = Engine(url, named, worker, executor_id)
    Process.engine = engine  # before launch: DBOS resumes unfinished runs as it launches
    config: dict[str, Any] = {
        "name": APP_NAME,
        "system_database_url": url,
        "application_version": APP_VERSION,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.05,
        # DBOS pings each pooled connection before each use: a round trip per transaction,
        # two per recorded step. Without the ping, a connection the server dropped fails its
        # first statement, is discarded with the rest of the pool, and DBOS retries the
        # operation on a new connection (its `db_retry`): nothing is lost or done twice.
        "db_engine_kwargs": {"pool_pre_ping": False},
    }
    if executor_id is not None:
        config["executor_id"] = executor_id
    try:
        use_write_ahead_log(url)
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
        Process.engine = None
        dbos.DBOS.destroy(destroy_registry=False)
        close_step_tables()
        raise
    return engine


def launched() -> Engine | None:
    """The engine this process launched, if any."""
    return Process.engine


def shutdown() -> None:
    """Stop DBOS in this process (runs in flight stop; they resume at the next launch)."""
    if Process.engine is None:
        return
    Process.engine = None
    _dbos().DBOS.destroy(destroy_registry=False)
    close_step_tables()


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
