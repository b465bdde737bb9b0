"""A child process of the test of an LLM router asked again after a kill: `gaps_network`'s
team with a shared budget (on the SQLite file `AN_BUDGET_STORE`; a hold not settled stays
held for 600 s, longer than the test): `python -m tests.network.durable.router_budget_child
DB RUN_ID MODE` (see `run_child`)."""

from __future__ import annotations

import os

from network import Network, SharedBudget
from tests.network.durable.gaps_network import team
from tests.network.durable.run_child import run_child

BUDGET_KEY = "durable:gaps"

budgeted = Network(
    "gaps",
    agents=list(team.agents.values()),
    router=team.router,
    budget=SharedBudget(BUDGET_KEY, store=os.environ["AN_BUDGET_STORE"], hold_seconds=600),
)

if __name__ == "__main__":
    run_child(budgeted)
