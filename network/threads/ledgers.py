"""The ledgers of shared budgets, on the stores they name (see `network.run.budgets`).

`open_accounts` gives a run one `BudgetAccount` per `SharedBudget`: its key resolved from the
run's thread, its ledger on the budget's store. A budget without `store=` uses the run's
thread store (the budgets of a conversation live beside it), else the default store, as a
thread would; a store named by a URL or path is opened for the run and closed at its end.
`SQLStore` keeps its figures in two tables of its database (`network.threads.sql_ledger`,
imported only then); `MemoryStore`, or any other store, in this process. Each store keeps one
ledger for its lifetime.

A key is reserved on once per request, on one store: a budget naming a key the run reserves on
already, on the same store (the same budget twice in a list, two budgets of one key, or a
sub-run whose network has its caller's budget, as `Network(budget=...)` on both gives it), adds
no second account, which would count every request twice; its caps are checked with the
account's (the tighter of each).
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Sequence
from os import PathLike
from typing import Any

from network.errors import ConfigurationError
from network.run.budgets.account import BudgetAccount, close_accounts
from network.run.budgets.ledger import BudgetFigures, Caps, Ledger
from network.run.budgets.memory_ledger import MemoryLedger
from network.run.budgets.shared import SharedBudget, check_key
from network.run.context import RunContext
from network.run.result import RunResult
from network.threads.resolve import open_store
from network.threads.session import ThreadSession
from network.threads.store_leases import kept_with
from network.threads.urls import store_url

_ATTACHED: weakref.WeakKeyDictionary[Any, Ledger] = weakref.WeakKeyDictionary()


def ledger_of(store: Any) -> Ledger:
    """The ledger kept in `store` (see the module docstring)."""
    return kept_with(store, _ATTACHED, _sql_ledger, MemoryLedger)


def _sql_ledger(store: Any) -> Ledger:
    from network.threads.sql_ledger import SQLLedger  # noqa: PLC0415 (sqlalchemy)

    return SQLLedger(store)


def open_accounts(
    budgets: Sequence[SharedBudget],
    *,
    thread_id: str | None,
    user_id: str | None,
    app_name: str,
    thread_store: Any = None,
    held: Sequence[BudgetAccount] = (),
) -> tuple[BudgetAccount, ...]:
    """The accounts of a run (on thread `thread_id` of `user_id`, if any): `held` (a
    caller's, for a sub-run) and one per budget on a key and store not among them, a budget
    on one that is tightening its caps instead (see the module docstring)."""
    accounts = list(held)
    for budget in budgets:
        key = budget.key_for(thread_id, user_id, app_name)
        named = budget.store if budget.store is not None else thread_store
        where = store_url(named) if named is None or isinstance(named, str | PathLike) else named
        found = next(
            (n for n, a in enumerate(accounts) if a.key == key and _same(a.where, where)), None
        )
        if found is not None:
            accounts[found] = _tightened(accounts[found], budget)
            continue
        if budget.store is None and thread_store is not None:
            store, owned = thread_store, False
        else:
            store, owned = open_store(budget.store)
        accounts.append(
            BudgetAccount(budget, key, ledger_of(store), store.close if owned else None, where)
        )
    return tuple(accounts)


def _same(where: object, other: object) -> bool:
    """Whether two accounts' stores are one: the same URL, or the same store object."""
    return where == other if isinstance(where, str) else where is other


def _tighter(cap: Any, other: Any) -> Any:
    """The tighter of two caps (None: no cap)."""
    return other if cap is None else cap if other is None else min(cap, other)


def _tightened(account: BudgetAccount, budget: SharedBudget) -> BudgetAccount:
    """`account` with `budget`'s caps checked too (the tighter of each): a new account on the
    same ledger, which leaves the store's closing to `account` (an account held by a
    caller stays the caller's as it was)."""
    mine, theirs = account.caps, budget
    merged = BudgetAccount(account.budget, account.key, account.ledger, None, account.where)
    merged.caps = Caps(
        _tighter(mine.max_tokens, theirs.max_tokens),
        _tighter(mine.max_cost_usd, theirs.max_cost_usd),
        _tighter(mine.max_requests, theirs.max_requests),
        _tighter(mine.requests_per_minute, theirs.requests_per_minute),
    )
    return merged


async def on_budgets(
    ctx: RunContext,
    session: ThreadSession | None,
    budgets: Sequence[SharedBudget],
    run: Callable[[], Awaitable[RunResult]],
    user_id: str | None = None,
) -> RunResult:
    """`run()` with the run's accounts on `budgets` opened before (a sub-run keeps its
    caller's first) and the stores they opened closed after. A budget that cannot open (a
    `per=` that needs a thread the run is not on) fails the run before it starts.
    `user_id`: the run's user when it has no session (an AG-UI server's principal)."""
    try:
        accounts = open_accounts(
            budgets,
            thread_id=ctx.thread_id,
            user_id=session.user_id if session is not None else user_id,
            app_name=session.app_name if session is not None else ctx.network.name,
            thread_store=session.store if session is not None else None,
            held=ctx.engine.budget_accounts,
        )
    except BaseException:
        if session is not None:
            await session.close()
        raise
    held = ctx.engine.budget_accounts
    own = [account for account in accounts if account not in held]
    ctx.engine.budget_accounts = accounts
    try:
        return await run()
    finally:
        await close_accounts(own)


async def budget_figures(
    budget: SharedBudget, *, key: str | None = None, store: Any = None
) -> BudgetFigures:
    """What a budget's key spent and holds now, read from its store.

    `key`: for a budget made with `per=`, the key to read (`"thread:<app>/<thread id>"`,
    ...); default: the budget's own key. `store`: where to read, when the budget names none
    (its runs used their thread's store)."""
    if not isinstance(budget, SharedBudget):
        raise ConfigurationError(f"budget_figures takes a SharedBudget, got {budget!r}")
    if key is None:
        if budget.key is None:
            raise ConfigurationError(f"{budget!r} has per={budget.per!r}: give the key= to read")
        key = budget.key
    check_key("budget_figures: key", key)
    opened, owned = open_store(budget.store if budget.store is not None else store)
    try:
        return await ledger_of(opened).figures(key)
    finally:
        if owned:
            await opened.close()
