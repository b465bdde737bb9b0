"""Run leases: one run per thread at a time, decided by the store, across processes.

A server that runs threads for clients must refuse a second run on a thread while one is under
way, and two server processes on one database must agree on it. An in-memory flag cannot do
that, so the store keeps a lease per thread: a row naming its holder (a run) and when it
expires, claimed atomically.

- `claim(thread_id, holder, ttl)` takes the lease when nobody holds it, when its holder is
  `holder` already, or when it has expired (the holder's process died without releasing it);
  it answers whether the caller now holds it. Exactly one of several concurrent claims wins.
- `renew(thread_id, holder, ttl)` pushes the expiry back while the run goes on; False when the
  lease is no longer the holder's (it expired and someone else took it).
- `release(thread_id, holder)` ends it; releasing a lease one does not hold changes nothing.

Expiry uses each process's wall clock (seconds since the epoch), so the processes sharing a
database need clocks that agree to well within the lease's time to live (NTP does this). A
holder renews its lease every third of that time, so a live run never loses it.

Leases are kept apart from the thread's own data (their own table on SQL, see
`network.threads.sql_leases`): they say who is running, never what the thread holds, and a
lease left behind by a crash expires on its own. `run_leases(store)`
(`network.threads.store_leases`) gives the leases of a store: the ready stores have theirs; a
store of your own can provide `run_leases()` returning an object with these three methods, or
gets leases kept in this process only (enough for one server process, not for several).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anyio

from network.errors import ConfigurationError
from network.threads.ids import check_id
from network.threads.thread_data import Thread

DEFAULT_LEASE_TTL = 30.0  # seconds a lease lasts without renewal


@runtime_checkable
class RunLeases(Protocol):
    """Who runs which thread; see the module docstring for the contract."""

    async def claim(self, thread_id: str, holder: str, ttl: float) -> bool:
        """Take the lease of `thread_id` for `holder` for `ttl` seconds; whether it was taken."""
        ...

    async def renew(self, thread_id: str, holder: str, ttl: float) -> bool:
        """Extend `holder`'s lease by `ttl` seconds from now; False when it is not theirs."""
        ...

    async def release(self, thread_id: str, holder: str) -> None:
        """End `holder`'s lease of `thread_id` (nothing happens when it is not theirs)."""
        ...


@dataclass(frozen=True, slots=True)
class ReadClaim:
    """What `ReadingLeases.claim_reading` decided, and the thread it read."""

    taken: bool  # the caller now holds the lease
    foreign: bool  # the thread is another app's or user's: its lease was not touched
    existed: bool  # the thread existed when the claim was decided
    thread: Thread | None = None  # when taken: the thread as the lease now protects it
    created: bool = False  # the claim created the thread holding the messages it was given


@runtime_checkable
class ReadingLeases(Protocol):
    """Leases that claim a thread's lease and read the thread in one go (a server's
    admission: one round trip or two instead of a read, a claim and a read again)."""

    async def claim_reading(
        self, thread_id: str, holder: str, ttl: float, *, app_name: str, user_id: str
    ) -> ReadClaim:
        """Claim as `claim` does, unless the thread exists and belongs to another app or user
        (`foreign`, nothing claimed); when taken, the thread as it is under the lease."""
        ...


@runtime_checkable
class CreatingLeases(Protocol):
    """Reading leases that also create a thread the claim finds missing, holding a request's
    first messages, in the claim's own transaction (a served run on a new thread: one
    transaction for the claim, the thread's creation and the user's message instead of two),
    and remove it again when the request is then refused."""

    async def claim_creating(
        self,
        thread_id: str,
        holder: str,
        ttl: float,
        *,
        app_name: str,
        user_id: str,
        messages: Sequence[Any],
        run_id: str,
    ) -> ReadClaim:
        """`claim_reading`, and when the lease was taken on a thread that does not exist: the
        thread created for `app_name` and `user_id` holding `messages` (of run `run_id`) as
        its first commit, all in one transaction (`created`, the thread as created)."""
        ...

    async def release_created(self, thread_id: str, holder: str, revision: int) -> bool:
        """Remove the thread `holder`'s claim created (when it is still at `revision`, as the
        claim left it: nothing was committed on it since) and release the lease, in one
        transaction; whether the thread was removed."""
        ...


def check_ttl(ttl: float) -> float:
    """A lease's time to live, refused unless a finite number of seconds above zero."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < float("inf"):
        raise ConfigurationError(f"a lease's ttl must be a number of seconds > 0, got {ttl!r}")
    return float(ttl)


class MemoryLeases:
    """Leases kept in this process (the `MemoryStore`'s, and the fallback of other stores).

    Every method runs without awaiting in the middle of its work, so on one event loop each
    is atomic.
    """

    def __init__(self) -> None:
        self._leases: dict[str, tuple[str, float]] = {}  # thread id -> (holder, expires at)

    async def claim(self, thread_id: str, holder: str, ttl: float) -> bool:
        check_id("thread_id", thread_id)
        ttl = check_ttl(ttl)
        await anyio.lowlevel.checkpoint()
        now = time.time()
        current = self._leases.get(thread_id)
        if current is not None and current[0] != holder and current[1] > now:
            return False
        self._leases[thread_id] = (holder, now + ttl)
        self._forget_expired(now)
        return True

    async def renew(self, thread_id: str, holder: str, ttl: float) -> bool:
        ttl = check_ttl(ttl)
        await anyio.lowlevel.checkpoint()
        current = self._leases.get(thread_id)
        if current is None or current[0] != holder:
            return False
        self._leases[thread_id] = (holder, time.time() + ttl)
        return True

    async def release(self, thread_id: str, holder: str) -> None:
        await anyio.lowlevel.checkpoint()
        current = self._leases.get(thread_id)
        if current is not None and current[0] == holder:
            del self._leases[thread_id]

    def held(self, thread_id: str, now: float) -> bool:
        """Whether a lease on `thread_id` is held at `now` (taken and not expired): a run is
        under way on it (`MemoryStore` never evicts such a thread)."""
        current = self._leases.get(thread_id)
        return current is not None and current[1] > now

    def _forget_expired(self, now: float) -> None:
        """Drop expired leases once they are many, so the map stays as small as the runs."""
        if len(self._leases) < 1024:
            return
        for thread_id, (_, expires) in list(self._leases.items()):
            if expires <= now:
                del self._leases[thread_id]
