"""`SQLLeases.claim_creating` / `release_created` (`network.threads.sql_new_thread`): a run
lease's claim that creates a thread it finds missing holding a request's first messages, in
one transaction, and removes it again (only while nothing was committed on it) with the
lease's release."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from network.history.messages import UserMessage
from network.threads import SQLStore, ThreadStore
from network.threads.leases import CreatingLeases
from network.threads.store_leases import run_leases
from tests.network.threads.test_conformance import commit_exchange

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("store_kind", ["sqlite", "postgres"])]

# Thread ids of these tests' own ("cc-"), and every lease released at the end: the run leases'
# table is not emptied between tests on the suite's PostgreSQL server.


def said(text: str) -> list[UserMessage]:
    return [UserMessage(content=text, id=f"m-{text}")]


def transactions(statements: list[str]) -> int:
    """Each BEGIN, and each statement run outside one."""
    count, inside = 0, False
    for sql in statements:
        head = sql.lstrip().split(None, 1)[0].upper()
        if head == "BEGIN":
            count, inside = count + 1, True
        elif head in ("COMMIT", "ROLLBACK"):
            inside = False
        elif head != "PRAGMA" and not inside:
            count += 1
    return count


async def test_a_missing_thread_is_created_holding_the_messages_in_the_claims_transaction(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    assert isinstance(store, SQLStore)
    leases = run_leases(store)
    assert isinstance(leases, CreatingLeases)
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    claim = await leases.claim_creating(
        "cc-t", "h1", 30, app_name="notes", user_id="ann", messages=said("hello"), run_id="r1"
    )
    assert transactions(seen) == 1
    assert (claim.taken, claim.created, claim.existed, claim.foreign) == (True, True, False, False)
    assert claim.thread is not None and claim.thread.revision == 1
    assert [m.content for m in claim.thread.messages] == ["hello"]
    # what another process reads: the same thread, at the same revision
    again = await open_store().get_thread("cc-t")
    assert again is not None and again.revision == 1 and again.user_id == "ann"
    assert [m.content for m in again.messages] == ["hello"]
    # the lease is held: another claim is refused and creates nothing
    other = await leases.claim_creating(
        "cc-t", "h2", 30, app_name="notes", user_id="ann", messages=said("later"), run_id="r2"
    )
    assert (other.taken, other.created, other.existed) == (False, False, True)
    # a commit builds on it as on any thread
    assert await commit_exchange(store, "cc-t", 1, "answer") == 2
    await leases.release("cc-t", "h1")


async def test_an_existing_or_foreign_thread_is_claimed_or_refused_as_claim_reading_does(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    assert isinstance(store, SQLStore)
    leases = run_leases(store)
    assert isinstance(leases, CreatingLeases)
    await store.create_thread("cc-t", app_name="notes", user_id="ann")
    theirs = await leases.claim_creating(
        "cc-t", "h1", 30, app_name="notes", user_id="bob", messages=said("hi"), run_id="r1"
    )
    assert (theirs.foreign, theirs.taken, theirs.created) == (True, False, False)
    mine = await leases.claim_creating(
        "cc-t", "h1", 30, app_name="notes", user_id="ann", messages=said("hi"), run_id="r1"
    )
    assert (mine.taken, mine.existed, mine.created) == (True, True, False)
    assert mine.thread is not None and mine.thread.messages == []  # not added by the claim
    await leases.release("cc-t", "h1")


async def test_a_created_thread_is_removed_with_the_release_only_while_as_created(
    open_store: Callable[[], ThreadStore],
) -> None:
    store = open_store()
    assert isinstance(store, SQLStore)
    leases = run_leases(store)
    assert isinstance(leases, CreatingLeases)
    await leases.claim_creating(
        "cc-t", "h1", 30, app_name="notes", user_id="ann", messages=said("hi"), run_id="r1"
    )
    seen: list[str] = []
    store.statement_listeners.append(seen.append)
    assert await leases.release_created("cc-t", "h1", 1)
    assert transactions(seen) == 1
    assert await store.get_thread("cc-t") is None
    assert await open_store().get_thread("cc-t") is None
    assert await store.list_threads(app_name="notes") == []
    assert await leases.claim("cc-t", "someone-else", 30)  # released
    await leases.release("cc-t", "someone-else")
    # a thread committed on since its creation is not removed (the lease is released)
    await leases.claim_creating(
        "cc-u", "h1", 30, app_name="notes", user_id="ann", messages=said("hi"), run_id="r1"
    )
    await commit_exchange(store, "cc-u", 1, "answer")
    assert not await leases.release_created("cc-u", "h1", 1)
    kept = await store.get_thread("cc-u")
    assert kept is not None and kept.revision == 2
    assert await leases.claim("cc-u", "someone-else", 30)
    await leases.release("cc-u", "someone-else")


async def test_an_expired_lease_is_taken_over_and_the_thread_created_or_read(
    open_store: Callable[[], ThreadStore],
) -> None:
    """A lease a crashed process left (expired) on a missing thread: the claim takes it over
    and creates the thread; on a thread that exists: it takes it over and reads the thread."""
    store = open_store()
    assert isinstance(store, SQLStore)
    leases = run_leases(store)
    assert isinstance(leases, CreatingLeases)
    assert await leases.claim("cc-new", "crashed", 0.01)
    await store.create_thread("cc-old", app_name="notes", user_id="ann")
    await commit_exchange(store, "cc-old", 0, "before")
    assert await leases.claim("cc-old", "crashed", 0.01)
    await anyio.sleep(0.05)
    fresh = await leases.claim_creating(
        "cc-new", "h1", 30, app_name="notes", user_id="ann", messages=said("hi"), run_id="r1"
    )
    assert (fresh.taken, fresh.created) == (True, True)
    assert fresh.thread is not None and [m.content for m in fresh.thread.messages] == ["hi"]
    other = run_leases(open_store())  # another process's
    assert isinstance(other, CreatingLeases)
    taken = await other.claim_creating(
        "cc-old", "h2", 30, app_name="notes", user_id="ann", messages=said("hi"), run_id="r2"
    )
    assert (taken.taken, taken.created, taken.existed) == (True, False, True)
    assert taken.thread is not None and taken.thread.revision == 1
    assert [m.role for m in taken.thread.messages] == ["user", "assistant"]
    await leases.release("cc-new", "h1")
    await other.release("cc-old", "h2")
