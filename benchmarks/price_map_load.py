"""What pricing costs the native client: reading litellm's price map once, and each priced
answer after that, against importing litellm (what `LiteLLMModel` pays for the same map).

Each figure is measured in a fresh interpreter (the map is read once per process), median of
the repeats:

- `find_spec`: locating litellm's package without importing it;
- `read map`: reading and parsing the JSON file and keeping the native providers' prices
  (`agents.models._price_map.read_map`): what the first priced answer waits for, in a worker
  thread;
- `price one answer`: a cached lookup plus `Price.cost`, per answer afterwards;
- `import litellm`: for comparison.

    python benchmarks/price_map_load.py [repeats]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import time
t = time.perf_counter()
from agents.models._price_map import map_path, read_map, price_of
from agents.models.price import Price
from network.history.results import Usage
t0 = time.perf_counter()
path = map_path()
t1 = time.perf_counter()
catalog = read_map(path)
t2 = time.perf_counter()
price_of("openai/gpt-4o-mini")  # loads the process cache
usage = Usage(1000, 500, 1500, cached_tokens=300)
n = 100_000
t3 = time.perf_counter()
for _ in range(n):
    price_of("openai/gpt-4o-mini").cost(usage)
t4 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t4 - t3) / n * 1e6, path.stat().st_size, len(catalog))
"""

LITELLM = """
import os, time
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
t = time.perf_counter()
import litellm
print((time.perf_counter() - t) * 1e3)
"""


def _run(code: str) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    return [float(x) for x in done.stdout.split()]


def main(repeats: int = 7) -> None:
    runs = [_run(PROBE) for _ in range(repeats)]
    find, read, per_answer = (statistics.median(r[i] for r in runs) for i in range(3))
    size, kept = runs[0][3], runs[0][4]
    litellm = statistics.median(_run(LITELLM)[0] for _ in range(3))
    print(f"price map: {size / 1e6:.1f} MB, {kept:.0f} prices kept (median of {repeats})")
    print(f"  find_spec('litellm')      {find:8.2f} ms")
    print(f"  read map (once/process)   {read:8.2f} ms")
    print(f"  price one answer          {per_answer:8.3f} us")
    print(f"  import litellm            {litellm:8.0f} ms  (for comparison, median of 3)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
