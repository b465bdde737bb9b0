"""A child process of the summary and router-usage crash tests (`gaps_network`):
`python -m tests.network.durable.gaps_child DB RUN_ID MODE` (see `run_child`)."""

from __future__ import annotations

from tests.network.durable.gaps_network import team
from tests.network.durable.run_child import run_child

if __name__ == "__main__":
    run_child(team)
