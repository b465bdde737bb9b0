"""Shared budgets of a served network: one per principal, or the network's own.

    asgi = app(network, authorize=authorize,
               budget=lambda principal: SharedBudget(f"user:{principal}", max_tokens=200_000))

`budget=` of `app` is a `SharedBudget` (or a list of them) every run of the server reserves
on, or a function of the request's principal (the `authorize` hook's answer, None when the
server has no hook) returning the budgets of that principal's runs (None: none). Without it,
the network's own `Network(budget=...)` applies. A request that does not fit is refused
before it is sent: the run ends with RUN_ERROR, code `BudgetExceeded`, whose message names
the budget and the cap (the caller's own budget: nothing of anyone else's).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from network.agui.run_errors import INTERNAL_ERROR, LOGGER
from network.errors import ConfigurationError
from network.ids import new_id
from network.run.budgets.shared import SharedBudget, coerce_budgets
from network.run.context import RunContext
from network.run.definition import RunnableNetwork
from network.run.result import RunResult
from network.serving.errors import RequestError
from network.serving.screening import log_failure
from network.threads.ledgers import on_budgets
from network.threads.session import ThreadSession

BudgetOf = Callable[[str | None], "SharedBudget | Sequence[SharedBudget] | None"]


def check_budget(given: Any) -> BudgetOf | tuple[SharedBudget, ...] | None:
    """`app`'s `budget=`: None, budgets, or a function of the principal (checked later)."""
    if given is None or callable(given):
        return given  # type: ignore[no-any-return]
    try:
        return coerce_budgets("served", given)
    except ConfigurationError:
        raise ConfigurationError(
            "app: budget must be a SharedBudget, a list of them, or a function of the "
            f"principal returning them, got {given!r}"
        ) from None


def principal_budgets(
    network: RunnableNetwork,
    budget: BudgetOf | tuple[SharedBudget, ...] | None,
    principal: str | None,
) -> tuple[SharedBudget, ...]:
    """The budgets of `principal`'s runs, found before the run starts: a `budget=` function
    that raises or answers what is no budget is the server's failure, a 500
    `internal_error` with a reference (logged in full), never an empty event stream."""
    if budget is None:
        return tuple(getattr(network, "budget", ()) or ())
    if not callable(budget):
        return budget
    try:
        return coerce_budgets(network.name, budget(principal))
    except Exception as error:
        reference = new_id("err_")
        log_failure(error, logger=LOGGER, event="agui.budget_failed", reference=reference)
        raise RequestError(
            500,
            INTERNAL_ERROR,
            f"internal error (reference {reference}); the server's log has the details",
        ) from None


async def execute_on_budgets(
    budgets: tuple[SharedBudget, ...],
    principal: str | None,
    ctx: RunContext,
    session: ThreadSession | None,
    execute: Callable[[], Awaitable[RunResult]],
) -> RunResult:
    """`execute()`, each of its model requests reserving on the principal's `budgets`."""
    if not budgets:
        return await execute()
    return await on_budgets(ctx, session, budgets, execute, user_id=principal)
