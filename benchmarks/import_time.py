"""How long `import network, agents, routers` takes in a fresh interpreter (median of 15).

python benchmarks/import_time.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys

CODE = (
    "import time; t = time.perf_counter(); import network, agents, routers; "
    "print((time.perf_counter() - t) * 1000)"
)


def main(repeats: int = 15) -> float:
    samples = [
        float(
            subprocess.run(
                [sys.executable, "-c", CODE], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(repeats)
    ]
    median = statistics.median(samples)
    print(
        f"import network, agents, routers: median {median:.0f} ms "
        f"(min {min(samples):.0f}, max {max(samples):.0f}, {repeats} runs)"
    )
    return median


if __name__ == "__main__":
    main()
