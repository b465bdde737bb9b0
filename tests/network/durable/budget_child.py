"""A child process of the shared-budget replay test: the crash tests' team with a shared
budget (on the SQLite file `AN_BUDGET_STORE`, reclaiming unsettled holds after 1 s):
`python -m tests.network.durable.budget_child DB RUN_ID MODE` (see `run_child`).

The budget is the network's own (`Network(budget=...)`), so a run recovered in another
process, which has no live options of its caller, reserves on it too."""

from __future__ import annotations

import os

from network import Network, SharedBudget
from tests.network.durable.crash_network import team
from tests.network.durable.run_child import run_child

BUDGET_KEY = "durable:team"

budgeted = Network(
    "team",
    agents=list(team.agents.values()),
    router=team.router,
    state_schema=team.schema,
    budget=SharedBudget(BUDGET_KEY, store=os.environ["AN_BUDGET_STORE"], hold_seconds=1),
)

if __name__ == "__main__":
    run_child(budgeted)
