"""`SharedBudget`: a budget shared by runs and processes, on the thread store.

    budget = SharedBudget("tenant:acme", max_tokens=2_000_000, requests_per_minute=60)
    await network.run(task, budget=budget)

Before each model request the run reserves what the request may spend on the budget's key
(its input tokens plus its maximum output, and their price), in one conditional statement
on the store; the request is sent only when that fits, and its real usage is settled after
(what it did not use goes back), or the reservation is released when it failed. A request
that does not fit is refused before it is sent: `BudgetExceeded` names the budget and the
cap. Runs of many processes on one store share the key's figures, so together they never
spend past a cap (docs/budgets.md says how, and what an estimate can still leave over).

Decisions where the issue is silent:
- the key is the clearest one the application has: a string it chooses (`"tenant:acme"`,
  `"user:ann"`), or `per="thread"` / `"user"` / `"app"`, made from the run's thread
  (`thread:<app>/<thread id>`, `user:<app>/<user id>`, `app:<app>`): a thread's budget is
  how limits carry across the runs of a thread, in any process;
- caps are given with the budget, not stored: every process states its own, and the store
  holds only what was spent and reserved, so raising a cap is a deploy, not a migration;
- the reservation of a request is its input tokens, counted with the model's tokenizer when
  litellm knows it, else about four characters a token (as a context policy counts), plus
  its maximum output: the request's `max_tokens` (or `max_completion_tokens`) parameter,
  else `output_estimate` (4,096 by default); its cost is that at the model's `price`, when
  the model knows it before answering (an unpriced model reserves no cost; its answer's
  cost, if it tells one, is settled after);
- a reservation a process never settled (it died) is given back after `hold_seconds`, as
  spent: the request may have been made and billed, so the budget assumes the worst;
- `requests_per_minute` counts requests in fixed one-minute windows per key; a request over
  it waits for the next window, up to `rate_wait` seconds, then is refused.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from network.errors import ConfigurationError
from network.numbers import check_number
from network.run.store_option import check_store

PER = ("thread", "user", "app")
MAX_KEY_LENGTH = 256
MAX_COUNT = 2**53 - 1  # a token or request cap: what a ledger's 64-bit column sums safely
MAX_RATE = 2**31 - 1  # requests per minute: the window's count is a 32-bit column
# What a thread store answers (`network.threads.ThreadStore`, a layer above this one, which a
# test keeps this list equal to): a `store=` object without them is refused when the budget
# is made, not when a run first opens it.


class SharedBudget:
    """A budget on the store, shared by every run (in any process) that names its key.

    Args:
        key: the budget's key: a tenant, a user, an app (`"tenant:acme"`); 1 to 256
            characters, no control character.
        per: instead of `key`, "thread", "user" or "app": the run's own thread, the
            thread's user, or the app (the run must be on a thread for the first two).
        max_tokens: the most input plus output tokens the key may spend.
        max_cost_usd: the most it may spend in USD (models priced before they answer).
        max_requests: the most model requests it may make.
        requests_per_minute: the most requests it may start in a minute.
        store: where the key's figures live: a database URL or SQLite path, or a store
            object (`SQLStore`, `MemoryStore`). Default: the run's thread store, else the
            default store (`AGENT_NETWORK_STORE`, else `agent-network.db`).
        output_estimate: tokens reserved for the answer of a request that sets no
            `max_tokens`.
        hold_seconds: how long a reservation may stay unsettled before it is counted as
            spent and given back (a process that died with a request under way).
        rate_wait: how long a request may wait for room under `requests_per_minute`
            before it is refused.

    Without caps, a budget only counts: what the key spent is `await budget.figures()`.
    A bad value is a `ConfigurationError` naming the field.
    """

    __slots__ = (
        "hold_seconds",
        "key",
        "max_cost_usd",
        "max_requests",
        "max_tokens",
        "output_estimate",
        "per",
        "rate_wait",
        "requests_per_minute",
        "store",
    )

    def __init__(
        self,
        key: str | None = None,
        *,
        per: str | None = None,
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
        max_requests: int | None = None,
        requests_per_minute: int | None = None,
        store: Any = None,
        output_estimate: int = 4096,
        hold_seconds: float = 600.0,
        rate_wait: float = 30.0,
    ) -> None:
        if (key is None) == (per is None):
            raise ConfigurationError(
                "SharedBudget takes a key (a tenant, user or app id) or per= "
                f"({', '.join(PER)}), one of the two"
            )
        if key is not None:
            check_key("SharedBudget.key", key)
        if per is not None and per not in PER:
            raise ConfigurationError(
                f"SharedBudget.per must be one of {', '.join(PER)}, got {per!r}"
            )
        self.key = key
        self.per = per
        self.max_tokens = check_number(
            "SharedBudget.max_tokens", max_tokens, integer=True, maximum=MAX_COUNT, optional=True
        )
        cost_cap = check_number("SharedBudget.max_cost_usd", max_cost_usd, optional=True)
        # a float, as the ledger's column: an int cap past 2**63 reached SQLite as an
        # OverflowError on the first request
        self.max_cost_usd = None if cost_cap is None else float(cost_cap)
        self.max_requests = check_number(
            "SharedBudget.max_requests",
            max_requests,
            integer=True,
            maximum=MAX_COUNT,
            optional=True,
        )
        self.requests_per_minute = check_number(
            "SharedBudget.requests_per_minute",
            requests_per_minute,
            integer=True,
            minimum=1,
            maximum=MAX_RATE,
            optional=True,
        )
        self.output_estimate = check_number(
            "SharedBudget.output_estimate",
            output_estimate,
            integer=True,
            minimum=1,
            maximum=MAX_COUNT,
        )
        self.hold_seconds = check_number("SharedBudget.hold_seconds", hold_seconds, above=True)
        self.rate_wait = check_number("SharedBudget.rate_wait", rate_wait)
        self.store = check_store("SharedBudget.store", store)

    @property
    def capped(self) -> bool:
        """Whether any cap is set (a budget without one only counts)."""
        return (
            self.max_tokens is not None
            or self.max_cost_usd is not None
            or self.max_requests is not None
            or self.requests_per_minute is not None
        )

    def key_for(self, thread_id: str | None, user_id: str | None, app_name: str) -> str:
        """The key a run's spending goes to: `key`, or the one `per` makes from its thread."""
        if self.key is not None:
            return self.key
        if self.per == "app":
            return f"app:{app_name}"
        if thread_id is None:
            raise ConfigurationError(
                f"SharedBudget(per={self.per!r}) needs a run on a thread "
                "(network.run(..., thread=ThreadRef(...))); give a key= for a run without one"
            )
        if self.per == "thread":
            return f"thread:{app_name}/{thread_id}"
        return f"user:{app_name}/{user_id or ''}"

    def __repr__(self) -> str:
        caps = {
            name: getattr(self, name)
            for name in ("max_tokens", "max_cost_usd", "max_requests", "requests_per_minute")
            if getattr(self, name) is not None
        }
        shown = f"{self.key!r}" if self.key is not None else f"per={self.per!r}"
        extra = "".join(f", {name}={value!r}" for name, value in caps.items())
        return f"SharedBudget({shown}{extra})"


def check_key(field: str, key: Any) -> str:
    """A budget key: a string of 1 to 256 characters, not blank, no control character."""
    if (
        not isinstance(key, str)
        or not key.strip()
        or len(key) > MAX_KEY_LENGTH
        or any(unicodedata.category(char) in ("Cc", "Cs") for char in key)
    ):
        raise ConfigurationError(
            f"{field} must be 1 to {MAX_KEY_LENGTH} characters, not blank, with no control "
            f"character, got {key!r}"
        )
    return key


def coerce_budgets(network: str, budget: Any) -> tuple[SharedBudget, ...]:
    """`budget=` of a run or of network `network`: None, one `SharedBudget`, or several."""
    owner = f"network {network!r}"
    if budget is None:
        return ()
    given = (budget,) if isinstance(budget, SharedBudget) else budget
    if isinstance(given, str) or not isinstance(given, list | tuple):
        raise ConfigurationError(
            f"{owner}: budget must be a SharedBudget or a list of them, got {budget!r}"
        )
    for item in given:
        if not isinstance(item, SharedBudget):
            raise ConfigurationError(
                f"{owner}: budget must be a SharedBudget or a list of them, got {item!r}"
            )
    return tuple(given)
