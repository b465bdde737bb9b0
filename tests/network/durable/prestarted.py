"""A crash test's child started ahead of its turn:
`python -m tests.network.durable.prestarted GO MODULE ARGS...`.

It imports what takes a child's start-up (the library, DBOS: seconds of CPU) while the child
before it still runs, waits for the file GO, then runs MODULE as `python -m MODULE ARGS...`
would. The tests create GO once the child before is killed: so each child still begins its
work (launching DBOS, resuming the run) after the kill, as if started then, without waiting
out its imports first.
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

# Imported ahead: the start-up this module exists to overlap.
import dbos
import dbos._core
import dbos._dbos  # noqa: F401

import agents  # noqa: F401
import network.durable  # noqa: F401


def main() -> None:
    go, module, *args = sys.argv[1:]
    while not Path(go).exists():
        time.sleep(0.005)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
