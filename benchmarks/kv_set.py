"""Micro-benchmark: microseconds per `kv.set`, per kind of key.

Every set runs the key's merge handler, validates against the key's type (an untyped value, or
one with an `Any` part, is also checked to be plain JSON), records the RFC 6902 ops and the
writer. Run: `python benchmarks/kv_set.py` (median of 7 repeats of 20,000 sets).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from pydantic import BaseModel

from network import State, merge_dicts


class Point(BaseModel):
    x: int
    y: int


def keep_max(current: Any, new: Any) -> Any:
    return new if current is None else max(current, new)


SCHEMA = {
    "count": {"type": int},
    "items": {"type": list[str]},
    "files": {"type": dict[str, str], "handler": merge_dicts},
    "best": {"type": int, "handler": keep_max},
    "point": {"type": Point},
}

CASES: dict[str, tuple[str, Any]] = {
    "untyped replace": ("free", 1),
    "untyped nested (10 small dicts)": ("free", [{"a": i, "b": "x"} for i in range(10)]),
    "int replace (validated)": ("count", 5),
    "list[str] append (merge_lists)": ("items", "x"),
    "dict[str, str] entry (merge_dicts)": ("files", {"a.py": "print()"}),
    "custom handler": ("best", 7),
    "pydantic model": ("point", {"x": 1, "y": 2}),
    "temp: key": ("temp:scratch", 1),
}


def per_set(key: str, value: Any, count: int) -> float:
    state = State(schema=SCHEMA)
    kv = state.kv
    started = time.perf_counter()
    for _ in range(count):
        kv.set(key, value)
    elapsed = time.perf_counter() - started
    return elapsed / count * 1e6


def main(count: int = 20_000, repeats: int = 7) -> dict[str, float]:
    results = {}
    for label, (key, value) in CASES.items():
        per_set(key, value, 1000)  # warm up
        samples = [per_set(key, value, count) for _ in range(repeats)]
        results[label] = statistics.median(samples)
        print(f"{label:38s} {results[label]:6.2f} us/set  (min {min(samples):.2f})")
    return results


if __name__ == "__main__":
    main()
