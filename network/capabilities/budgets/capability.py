"""The metering capability: a run with shared budgets reserves before each model request.

The network adds it to a run that has shared budgets (`SharedBudget`, `network.run.budgets`);
its request stage hands the call a metered model (`network.capabilities.budgets.metered`), so
every request the call makes (a typed answer's re-ask included) reserves first and settles
after. The metered model is what the agent step asks, so in a durable run the reservation is
inside the recorded model step: a replayed step reserves nothing.
"""

from __future__ import annotations

from network.capabilities.budgets.metered import metered
from network.run.agent_call import AgentCall
from network.run.capability import Capability


class Metering(Capability):
    """Each model request of the run's agent calls reserved on the run's shared budgets."""

    every_request = True  # a guardrail's agent's requests reserve too

    async def request(self, call: AgentCall) -> None:
        accounts = call.run.engine.budget_accounts
        if accounts:
            call.model = metered(accounts, call.model)

    def __repr__(self) -> str:
        return "Metering()"
