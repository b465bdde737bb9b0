"""How long `import network, agents, routers` takes in a fresh interpreter.

The figure is the one the README quotes: the wall time of `python -c "import network, agents,
routers"` minus that of a bare `python -c pass`, median of 9 pairs (each pair run back to back,
so a busy machine slows both alike), with bytecode cached: one warm-up run writes the
`__pycache__` files first, even where PYTHONDONTWRITEBYTECODE is set. The time the import itself
measures inside the process (`time.perf_counter` around it) is printed beside it.

    python benchmarks/import_time.py [repeats]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

IMPORT = "import network, agents, routers"
TIMED = f"import time; t = time.perf_counter(); {IMPORT}; print((time.perf_counter() - t) * 1000)"


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def _run(code: str, env: dict[str, str]) -> tuple[float, str, float]:
    """Wall ms, stdout and CPU ms (user + system) of one fresh interpreter running `code`."""
    cpu = _cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return (time.perf_counter() - start) * 1000, done.stdout, _cpu_of_children() - cpu


def main(repeats: int = 9) -> float:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    _run(IMPORT, env)  # writes the bytecode caches
    extra: list[float] = []
    extra_cpu: list[float] = []
    inside: list[float] = []
    for _ in range(repeats):
        bare, _, bare_cpu = _run("pass", env)
        full, _, full_cpu = _run(IMPORT, env)
        extra.append(full - bare)
        extra_cpu.append(full_cpu - bare_cpu)
        inside.append(float(_run(TIMED, env)[1]))
    median = statistics.median(extra)
    print(
        f"import network, agents, routers: median {median:.0f} ms over a bare `python -c pass` "
        f"(min {min(extra):.0f}, max {max(extra):.0f}, {repeats} pairs); CPU time over the bare "
        f"interpreter: median {statistics.median(extra_cpu):.0f} ms; timed inside the process: "
        f"median {statistics.median(inside):.0f} ms"
    )
    return median


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
