"""A process sharing a durable database with others: `python -m tests.network.durable.peer_child
DB MODE ARG`.

MODE `run` (ARG: the run id) launches durable runs with the crash tests' `team` and runs it;
MODE `serve` (ARG: network names joined by ",", from `team` and `other`) launches with those
networks and stays up, taking over the runs of processes that die, until `<log>.stop`
exists. Each writes `<log>.<mode>-<pid>.launched` once launched. `AN_CHECK_EVERY` sets the
seconds between two looks for dead processes' runs.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio

from agents import Agent, ScriptedModel
from network import Network, durable
from tests.network.durable.crash_network import team

other = Network(
    "other", agents=[Agent("solo", description="answers", model=ScriptedModel(["done"] * 100))]
)


def main() -> None:
    db, mode, arg = sys.argv[1:4]
    log = os.environ["AN_DURABLE_LOG"]
    networks = (
        [team] if mode == "run" else [{"team": team, "other": other}[n] for n in arg.split(",")]
    )
    durable.launch(networks, db=db, check_every=float(os.environ.get("AN_CHECK_EVERY", "0.2")))
    Path(f"{log}.{mode}-{os.getpid()}.launched").write_text("")
    try:
        if mode == "run":
            anyio.run(lambda: team.run("go", durable=True, run_id=arg))
        else:
            while not Path(f"{log}.stop").exists():
                time.sleep(0.05)
    finally:
        durable.shutdown()


if __name__ == "__main__":
    main()
