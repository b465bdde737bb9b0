"""The process's DBOS engine: configured and launched once, with the networks it may run.

DBOS keeps global state: one instance per process, and workflow functions registered before
launch. This module owns that state so the rest of the library never touches it directly:

- `launch(networks, db=...)` registers the one workflow this library defines
  (`agent_network.run`, which runs any registered network by name), configures DBOS on the
  system database `db` under an executor id of this process's own, and launches it. From
  then on the process takes over the runs of processes that died, never those of a live one
  (`network.durable.liveness`, `network.durable.takeover`): every network such a run may
  need must be given here, not later.
- A second `launch` on the same database only adds networks; on another database it is a
  `DurableConfigError` (call `shutdown()` first: DBOS cannot serve two databases at once).
- A process that is not a worker takes no run from the workers' queues: queued runs go to
  workers only, each to a worker that serves its network (a queue per network,
  `network.durable.network_queues`). Every process claims the runs of its own queue (runs
  it took over), and a worker those of its networks' queues, through
  `network.durable.dispatch` (woken by the database, never by a poll), not through DBOS's
  queue threads, which poll.

`dbos` is imported inside these functions, never when `network` or `network.durable` is.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from network.durable.announcer import close_announcers
from network.durable.connections import close_connections, connections
from network.durable.dispatch import Dispatcher, Lane, start_claimed
from network.durable.legacy_queue import LegacyQueue
from network.durable.liveness import Liveness
from network.durable.network_queues import network_queue
from network.durable.process import DurableConfigError, Engine, Process
from network.durable.sqlite_journal import use_write_ahead_log
from network.durable.step_table import close_step_tables
from network.durable.takeover import Takeover
from network.errors import InvalidIdError
from network.numbers import check_number
from network.threads.ids import check_id
from network.threads.urls import shown_url

APP_NAME = "agent-network"
"""The DBOS application name every process of this library uses (workers, clients, runs)."""
APP_VERSION = "agent-network-durable-1"
"""Pinned, so that any process running this library recovers and dequeues any other's runs
(DBOS would otherwise derive a version from the workflow's source code)."""
WORKFLOW_NAME = "agent_network.run"
WORKERS = "workers"
"""The dispatcher's lane of a worker's networks' queues (`network.durable.dispatch.Lane`)."""
DEFAULT_DB = "sqlite:///agent-network-durable.sqlite"
EXECUTOR_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")
"""An executor id names a lock (and, on SQLite, a file): plain characters only."""
CHECK_EVERY = 1.0
"""Seconds between two looks for runs of processes that died (`launch(check_every=...)`)."""


T = TypeVar("T")

_workflow: Any = None  # the registered workflow function (registered once per process)


def system_database_url(db: str | None) -> str:
    """DBOS's SQLAlchemy URL for `db` (an async driver named in it is dropped: DBOS is sync)."""
    url = DEFAULT_DB if db is None else db
    if not isinstance(url, str):
        raise DurableConfigError(f"db must be a database URL string, got {url!r}")
    scheme, found, rest = url.partition("://")
    base = scheme.partition("+")[0]  # a driver named after a '+' is DBOS's to choose
    if found and base in ("postgresql", "postgres"):
        return f"postgresql://{rest}"
    if found and base == "sqlite":
        path = rest.removeprefix("/").partition("?")[0]
        if not rest.startswith("/") or path in ("", ":memory:"):
            # A host (`sqlite://host/...`) or no file: the record must be a file that outlives
            # the process (and that the processes of this machine share).
            raise DurableConfigError(
                "db must name an SQLite file, sqlite:///relative/path or "
                f"sqlite:////absolute/path, got {shown_url(url)!r}"
            )
        return f"sqlite://{rest}"
    raise DurableConfigError(f"db must be a sqlite:// or postgresql:// URL, got {shown_url(url)!r}")


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
    check_every: float = CHECK_EVERY,
) -> Engine:
    """Configure and launch DBOS for this process (once), with the networks it may run.

    Args:
        networks: every network this process runs durably, or resumes (by name).
        db: the DBOS system database: `sqlite:///file` (default
            `sqlite:///agent-network-durable.sqlite`) or `postgresql://...` (needed to share
            runs between processes and machines).
        worker: take the queued runs of these networks (`agent-network worker` sets it).
        worker_concurrency: the most queued runs this process runs at once (workers only; at
            most 10,000).
        executor_id: this process's DBOS executor id (default: a new one per launch); no
            two live processes may share one.
        check_every: seconds between two looks for runs of processes that died
            (`network.durable.takeover`).
    """
    url = system_database_url(db)
    named = _by_name(networks)
    _check_launch_options(worker_concurrency, check_every, executor_id)
    if Process.engine is not None:
        if executor_id is not None and executor_id != Process.engine.executor_id:
            raise DurableConfigError(
                f"durable runs are already launched in this process as executor "
                f"{Process.engine.executor_id!r}, not {executor_id!r}: one process, one executor id"
            )
        return _add_networks(Process.engine, url, worker, named)
    executor_id = executor_id or new_executor_id()
    dbos = _dbos()
    registered_workflow()
    use_write_ahead_log(url)
    if url.startswith("postgresql"):
        dbos.DBOS.migrate(url)  # the database must exist for the lock, taken before launch
    # Held before DBOS starts anything under this id, released when the process ends.
    liveness = Liveness(url, executor_id)
    engine = Engine(url, named, worker, executor_id)
    Process.engine = engine  # before launch: runs taken over at launch need their networks
    takeover = Takeover(liveness, engine.networks, workflow_name=WORKFLOW_NAME)
    lanes = {"own": Lane([takeover.queue])}
    if worker:  # the queues of the networks it serves, and only those
        lanes[WORKERS] = Lane([network_queue(name) for name in named], worker_concurrency)
    _start(dbos, engine, takeover, lanes, check_every)
    engine.takeover = takeover
    return engine


def _add_networks(engine: Engine, url: str, worker: bool, named: dict[str, Any]) -> Engine:
    """A second `launch`: the launched engine with `named` added, if it is the same engine."""
    if engine.db != url or worker != engine.worker:
        raise DurableConfigError(
            f"durable runs are already launched on {shown_url(engine.db)}; "
            "call network.durable.shutdown() before launching on another database"
        )
    for name, network in named.items():
        launched_as = engine.networks.get(name)
        if launched_as is not None and launched_as is not network:
            raise another_network_named(name)
    engine.networks.update(named)
    if engine.worker and engine.dispatcher is not None:  # it serves their queues too
        engine.dispatcher.serve(WORKERS, [network_queue(name) for name in named])
    return engine


MAX_CONCURRENCY = 10_000
"""The most runs a worker may run at once: each is a thread of its own (DBOS's), and a limit
past what a claim's SQL `LIMIT` holds failed every claim with an OverflowError while the
worker looked alive."""


def _check_launch_options(
    worker_concurrency: int | None, check_every: float, executor_id: str | None
) -> None:
    check_number(
        "worker_concurrency",
        worker_concurrency,
        integer=True,
        minimum=1,
        maximum=MAX_CONCURRENCY,
        optional=True,
        error=DurableConfigError,
    )
    check_number("check_every", check_every, above=True, error=DurableConfigError)
    if executor_id is not None:
        check_executor_id(executor_id)


def check_executor_id(executor_id: object, *, longest: int = 100) -> None:
    """`DurableConfigError` naming `executor_id` unless it is 1 to `longest` plain characters."""
    if not (
        isinstance(executor_id, str)
        and len(executor_id) <= longest
        and EXECUTOR_ID.fullmatch(executor_id)
    ):
        raise DurableConfigError(
            f"executor_id must be 1 to {longest} letters, digits, '_', '.' or '-', "
            f"got {executor_id!r}"
        )


def _dbos_config(url: str, executor_id: str) -> dict[str, Any]:
    """DBOS's configuration for this process's engine on the system database `url`."""
    return {
        "name": APP_NAME,
        "system_database_url": url,
        "application_version": APP_VERSION,
        "executor_id": executor_id,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.05,
        # DBOS's notifier thread wakes every this many seconds to announce DBOS's own stream
        # and event writes (0.01 by default: a hundred wakeups a second in an idle worker).
        # This library announces its writes itself (`event_log`, `queue_table`); a DBOS
        # event or stream a tool writes is announced within 0.1 s, the event log's delay.
        "notification_coalesce_sec": 0.1,
        # DBOS pings each pooled connection before each use: a round trip per transaction,
        # two per recorded step. Without the ping, a connection the server dropped fails its
        # first statement, is discarded with the rest of the pool, and DBOS retries the
        # operation on a new connection (its `db_retry`): nothing is lost or done twice.
        "db_engine_kwargs": {"pool_pre_ping": False},
    }


def _start(
    dbos: Any,
    engine: Engine,
    takeover: Takeover,
    lanes: dict[str, Lane],
    check_every: float,
) -> None:
    """Launch DBOS, then claim `lanes`' queues and look for runs of dead processes; on any failure,
    undo it all (the engine is forgotten, the liveness lock released) and raise."""
    executor_id = takeover.liveness.executor_id
    dispatcher: Dispatcher | None = None
    try:
        dbos.DBOS(config=_dbos_config(engine.db, executor_id))
        dbos.DBOS.listen_queues([])  # this library's queues are claimed by its dispatcher
        dbos.DBOS.launch()
        from dbos._dbos import _get_dbos_instance  # noqa: PLC0415 (dbos is optional and heavy)

        instance = _get_dbos_instance()
        stop_unused_threads(instance)
        db = connections(instance._sys_db)
        dispatcher = Dispatcher(
            db,
            lanes,
            executor_id=executor_id,
            version=APP_VERSION,
            start=start_claimed,
            legacy=LegacyQueue(db).move if engine.worker else None,
        )
        engine.dispatcher = dispatcher
        takeover.db = dispatcher.db
        off_loop(dispatcher.start)
        off_loop(lambda: takeover.start(check_every))
    except BaseException:
        takeover.stop()
        if dispatcher is not None:
            dispatcher.stop()
        Process.engine = None
        dbos.DBOS.destroy(destroy_registry=False)
        close_announcers()
        close_step_tables()
        close_connections()
        takeover.liveness.close()
        raise


def stop_unused_threads(instance: Any) -> None:
    """Stop DBOS's background threads that serve features this library does not use.

    Each wakes on a timer and reads the database, so together they were most of an idle
    worker's CPU (about 1.3 % of a core of its 1.6 %): DBOS's queue threads (the list of
    queues every second, and a poll of DBOS's internal queue every second: this library's
    queues are claimed by `network.durable.dispatch`, and it moves runs with
    `resume_workflow(queue_name=...)`, never onto the internal queue), the background jobs
    (delayed workflows and workflow timeouts, every second: this library sets neither) and
    the schedule poller (DBOS schedules). DBOS's notification listener and notifier stay:
    a tool may use DBOS's messages and events. `DBOS.destroy` joins the stopped threads as
    before."""
    # DBOS keeps these events on private attributes: a release that renames them leaves its
    # threads running (idle CPU as before), never a worker that fails to launch.
    stops = [*getattr(instance, "background_thread_stop_events", ())]
    stops.append(getattr(instance, "_background_jobs_stop_event", None))
    for event in stops:  # the queue threads, the schedules, the background jobs
        if event is not None:
            event.set()


def off_loop(call: Callable[[], T]) -> T:
    """`call()`, on a thread of its own when this one runs an event loop: DBOS refuses its
    blocking calls (queues, listings) inside one, and `launch` may be called from a run."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call()
    with ThreadPoolExecutor(1, thread_name_prefix="agent-network-launch") as pool:
        return pool.submit(call).result()


def new_executor_id() -> str:
    """A new executor id (`an-` and 16 hex digits): never reused."""
    return f"an-{uuid.uuid4().hex[:16]}"


def launched() -> Engine | None:
    """The engine this process launched, if any."""
    return Process.engine


def shutdown() -> None:
    """Stop DBOS in this process (runs in flight stop; another process, or the next launch
    here, takes them over)."""
    engine = Process.engine
    if engine is None:
        return
    takeover = engine.takeover
    dbos = _dbos()
    # First no new run: one started now would find its network gone and fail for good.
    if engine.dispatcher is not None:
        engine.dispatcher.stop()
    if takeover is not None:
        takeover.stop()
    try:
        # Runs in flight stop here, PENDING (taken over later); while they stop they still
        # find their networks.
        dbos.DBOS.destroy(destroy_registry=False)
    finally:
        Process.engine = None
        close_announcers()
        close_step_tables()
        close_connections()
        if takeover is not None:
            takeover.liveness.close()  # last: from now on others may take its runs over


def another_network_named(name: str) -> DurableConfigError:
    """The error for a network whose name this process launched with another network: a
    durable run is executed (and resumed) by its network's name, so one name is one network."""
    return DurableConfigError(
        f"another network named {name!r} was given to network.durable.launch in this "
        "process: a durable run is executed and resumed by its network's name, so each name "
        "names one network (call network.durable.shutdown() before launching a new one)"
    )


def _by_name(networks: Iterable[Any]) -> dict[str, Any]:
    if callable(getattr(networks, "run", None)) or not isinstance(networks, Iterable):
        raise DurableConfigError(
            f"networks must be a list of networks, got {networks!r} (write [network])"
        )
    named: dict[str, Any] = {}
    for network in networks:
        name = getattr(network, "name", None)
        if not isinstance(name, str) or not callable(getattr(network, "run", None)):
            raise DurableConfigError(f"{network!r} is not a network")
        _check_name(name)
        other = named.get(name)
        if other is not None and other is not network:
            raise DurableConfigError(f"two networks are named {name!r}")
        named[name] = network
    return named


def _check_name(name: str) -> None:
    """A network's name as `DurableClient.enqueue` takes it (the id rules: no NUL, control
    character or lone surrogate, at most 256 characters, not blank): a name it refuses would
    launch a worker that never gets a run, and runs no other process can follow."""
    try:
        check_id("network", name)
    except InvalidIdError as refused:
        shown = name if len(name) <= 80 else f"{name[:80]}..."
        raise DurableConfigError(
            f"network {shown!r} cannot run durably: its name "
            f"{str(refused).removeprefix('network ')} "
            "(DurableClient.enqueue refuses it, so its workers would never get a run)"
        ) from None
