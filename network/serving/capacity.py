"""`RunSlots`: how many runs a server holds at once, whatever the protocol and the thread.

One run per thread (`network.serving.threads`) does not bound a server: a stranger who opens
many threads at once makes it hold as many runs, each with a model call, its state and
conversation in memory, and a client's open stream. A server's `RunSlots` counts the runs in
flight and refuses one over its limit at once, before anything of it is kept: 503
`server_busy` with a `Retry-After` (`RequestError.retry_after`), in the JSON error shape of
every other refusal. A slot is taken by `ServedThreads.admit` (and `ServedThreads.slot` for a
run on no thread) and given back by `Admission.release`, which every protocol calls whatever
happened: a run that ends, fails, is cancelled or whose client went away frees its slot.

The default limit, `default_max_runs()`, is what one process can hold: each run keeps at
least two sockets open (the client's stream, the model call) and often more (an MCP server's
pipes, a tool's connections), so an eighth of the process's open-file limit, and at most
`MAX_DEFAULT_RUNS` (a run may hold a thread's state, up to 4 MiB by default, and a request's
conversation, up to 1 MiB: 512 of them is some 2.5 GiB at worst, where a typical run in flight
holds tens of kB; 512 leaves room for the hundreds of concurrent clients a server meets).
Give `max_runs=` to the server to choose, and the same `RunSlots` to several servers of one
process (an AG-UI and an A2A app on one store) to bound them together. A `RunSlots` counts
without a lock: the servers sharing one run on one event loop (each worker process of
`serve --workers` has its own).
"""

from __future__ import annotations

from network.errors import ConfigurationError
from network.numbers import check_number
from network.serving.errors import RequestError

MAX_DEFAULT_RUNS = 512
FDS_PER_RUN = 8  # sockets and pipes one run may hold, with room for the server's own
RETRY_AFTER_SECONDS = 1  # a run takes seconds: a client may try again soon


def default_max_runs() -> int:
    """The default limit on runs in flight: the open-file limit / `FDS_PER_RUN`, from 1 to
    `MAX_DEFAULT_RUNS` (`MAX_DEFAULT_RUNS` where the limit is unknown or unlimited)."""
    return open_file_share(FDS_PER_RUN, MAX_DEFAULT_RUNS)


def open_file_share(files_each: int, most: int) -> int:
    """How many things holding `files_each` open files the process's open-file limit allows,
    from 1 to `most` (`most` where the limit is unknown or unlimited): a server's default
    bound on what it holds for strangers."""
    try:
        import resource  # noqa: PLC0415 (POSIX only)

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return most
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return most
    return max(1, min(most, soft // files_each))


class Slot:
    """One run's place on the server; `release` gives it back (once: again does nothing).
    Also a context manager that releases it on exit."""

    __slots__ = ("_slots", "released")

    def __init__(self, slots: RunSlots) -> None:
        self._slots = slots
        self.released = False

    def release(self) -> None:
        """Give the place back (synchronous: safe in a `finally` even while cancelled)."""
        if not self.released:
            self.released = True
            self._slots.running -= 1

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


class RunSlots:
    """At most `limit` runs at once (see the module docstring).

    Args:
        limit: the most runs in flight (default `default_max_runs()`).
        retry_after: the seconds a refused client is told to wait (`Retry-After`).
    """

    def __init__(self, limit: int | None = None, *, retry_after: int = RETRY_AFTER_SECONDS):
        if limit is None:
            limit = default_max_runs()
        check_number("max_runs", limit, integer=True, minimum=1)
        check_number("retry_after", retry_after, integer=True, minimum=0)
        self.limit = limit
        self.retry_after = retry_after
        self.running = 0

    def take(self) -> Slot:
        """A slot for one run, or 503 `server_busy` when `limit` runs are under way.

        Synchronous: no other request can take the last slot between the check and the
        count."""
        if self.full:
            raise self.busy()
        self.running += 1
        return Slot(self)

    @property
    def full(self) -> bool:
        """Whether no slot is free now."""
        return self.running >= self.limit

    def check(self) -> None:
        """503 `server_busy` when no slot is free now: a protocol asks before it reads a
        request's body, so a full server refuses without taking it in (`take` decides)."""
        if self.full:
            raise self.busy()

    def busy(self) -> RequestError:
        """The refusal of a run over the limit."""
        return RequestError(
            503,
            "server_busy",
            f"the server is at its limit of {self.limit} {'run' if self.limit == 1 else 'runs'} "
            "under way; try again later",
            retry_after=self.retry_after,
        )


def run_slots(max_runs: int | RunSlots | None) -> RunSlots:
    """A server's `max_runs=` option as its `RunSlots` (a shared one as it is), or a
    `ConfigurationError`."""
    if isinstance(max_runs, RunSlots):
        return max_runs
    if max_runs is not None and (isinstance(max_runs, bool) or not isinstance(max_runs, int)):
        raise ConfigurationError(
            f"max_runs must be a positive integer or a RunSlots, got {max_runs!r}"
        )
    return RunSlots(max_runs)
