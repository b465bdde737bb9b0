"""A child process of the `sequence` crash test (`sequence_network`):
`python -m tests.network.durable.sequence_child DB RUN_ID MODE` (see `run_child`)."""

from __future__ import annotations

from tests.network.durable.run_child import run_child
from tests.network.durable.sequence_network import team

if __name__ == "__main__":
    run_child(team)
