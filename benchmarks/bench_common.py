"""Measurement helpers shared by the Python benchmark scripts.

Standard library only, so it runs unchanged in the project's environment (floor, ours) and in
the isolated peers venv. Every benchmark script prints exactly one JSON line on stdout:

    {"framework": ..., "variant": ..., "runtime": {...}, "versions": {...},
     "metrics": {"w1_us_per_step_n10": {"median": ..., "min": ..., "max": ..., "n": ...,
                 "samples": [...]}, ...},
     "notes": [...]}

Metric keys (every figure is lower-is-better):
    w1_us_per_step_n{N}   W1, microseconds per step, one run of N steps, instant model
    w2_wall_s             W2, wall time of 1000 concurrent runs x 10 steps, 10 ms per model call
    w2_wall_ratio         W2, wall time / ideal 0.1 s
    w2_cpu_us_per_step    W2, process CPU time / 10,000 steps
    w2_mem_mb             W2, peak RSS above the baseline RSS, MB (see measure_w2_once)
    w2_runs               W2, number of concurrent runs (a plain int; 1000 unless --quick)
    w3_us_per_step_n{N}   W3, microseconds per step over HTTP to the fake OpenAI server
    w3s_us_per_step_n{N}  W3 streamed: the same with `"stream": true` (SSE answers)
    w3_cpu_us_per_step_n{N}, w3s_cpu_us_per_step_n{N}
                          the client process's CPU time per step in W3 / W3 streamed (async
                          Python scripts; the server runs in its own process)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

W1_SIZES = (10, 100, 1000)
W3_SIZES = (10, 100)
W2_RUNS = 1000
W2_STEPS = 10
W2_LATENCY_S = 0.010
W2_IDEAL_S = W2_STEPS * W2_LATENCY_S
W2_WARMUP_RUNS = 50
REPEATS = 5
# Time budget per figure: after MIN_REPEATS, no further repeat is started once the repeats
# of that figure have used the budget (a peer whose one N = 1000 run or one W2 repeat takes
# 90 s would otherwise hold the suite for 15 minutes). Every figure records its n.
BUDGET_S = 150.0
MIN_REPEATS = 2
QUICK_W2_RUNS = 200
# A timed sample runs the workload back to back until it lasts about this long, so that short
# runs (N = 10 at a few microseconds per step) are not lost in timer and scheduler noise.
SAMPLE_TARGET_S = 0.25
QUICK_SAMPLE_TARGET_S = 0.1
WARMUP_S = 0.5


def parse_args(description: str, modes: tuple[str, ...] = ()) -> argparse.Namespace:
    """Command line shared by every Python benchmark script."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="smoke run: fewer repeats, no N = 1000")
    p.add_argument("--repeats", type=int, default=None, help=f"timed repeats (default {REPEATS})")
    p.add_argument(
        "--budget-s",
        type=float,
        default=None,
        help=f"time budget per figure, 0 = none (default {BUDGET_S:g}; quick 20)",
    )
    p.add_argument(
        "--min-repeats",
        type=int,
        default=None,
        help=f"repeats done whatever the budget (default {MIN_REPEATS}; quick 1)",
    )
    p.add_argument(
        "--w2-runs", type=int, default=None, help=f"W2 concurrent runs (default {W2_RUNS})"
    )
    p.add_argument("--workloads", default="w1,w2,w3", help="comma list out of w1,w2,w3")
    p.add_argument("--w1-sizes", default=None, help="comma list of N for W1 (default 10,100,1000)")
    p.add_argument("--w3-sizes", default=None, help="comma list of N for W3 (default 10,100)")
    p.add_argument(
        "--base-url",
        default=None,
        help="fake OpenAI server for W3, e.g. http://127.0.0.1:8765/v1 (default: start one)",
    )
    p.add_argument("--w2-once", action="store_true", help=argparse.SUPPRESS)
    if modes:
        p.add_argument("--mode", choices=modes, default=modes[0])
    args = p.parse_args()
    if args.repeats is None:
        args.repeats = 3 if args.quick else REPEATS
    if args.budget_s is None:
        args.budget_s = 20.0 if args.quick else BUDGET_S
    if args.min_repeats is None:
        args.min_repeats = 1 if args.quick else MIN_REPEATS
    args.min_repeats = min(args.min_repeats, args.repeats)
    if args.w2_runs is None:
        args.w2_runs = QUICK_W2_RUNS if args.quick else W2_RUNS
    args.workloads = {w.strip() for w in args.workloads.split(",") if w.strip()}
    if args.w1_sizes is None:
        args.w1_sizes = (10, 100) if args.quick else W1_SIZES
    else:
        args.w1_sizes = tuple(int(x) for x in args.w1_sizes.split(","))
    if args.w3_sizes is None:
        args.w3_sizes = (10,) if args.quick else W3_SIZES
    else:
        args.w3_sizes = tuple(int(x) for x in args.w3_sizes.split(","))
    args.sample_target_s = QUICK_SAMPLE_TARGET_S if args.quick else SAMPLE_TARGET_S
    return args


def log(*parts: object) -> None:
    """Progress goes to stderr; stdout carries only the JSON result line."""
    print(*parts, file=sys.stderr, flush=True)


def summarize(samples: list[float]) -> dict:
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "n": len(samples),
        "samples": [round(s, 3) for s in samples],
    }


def _check(got: int, want: int, what: str) -> None:
    if got != want:
        raise RuntimeError(f"{what}: run ended with {got} items, expected {want}")


def _inner_count(per_run_ns: float, n: int, warm_n: int, target_s: float) -> int:
    est = max(per_run_ns * n / warm_n, 1.0)
    return max(1, min(100_000, int(target_s * 1e9 / est)))


# --- W1 / W3: one run of N steps, timed back to back -------------------------------------------


def _keep_going(done: int, spent_ns: int, last_ns: int, args: argparse.Namespace) -> bool:
    """Whether to start another repeat: all `repeats` unless the figure's budget runs out."""
    if done >= args.repeats:
        return False
    if done < args.min_repeats or not args.budget_s:
        return True
    return (spent_ns + last_ns) / 1e9 <= args.budget_s


def time_runs_sync(
    run: Callable[[int], int], n: int, args: argparse.Namespace, label: str
) -> list[float]:
    """Microseconds per step, one sample per repeat; run(n) returns the final item count.

    Warmup: runs of min(n, 100) steps for about WARMUP_S before timing. A sample is `inner`
    back-to-back runs, `inner` chosen from the warmup so that a sample lasts ~sample_target_s.
    """
    warm_n = min(n, 100)
    t0 = time.perf_counter_ns()
    count = 0
    while True:
        _check(run(warm_n), warm_n, label)
        count += 1
        if time.perf_counter_ns() - t0 >= WARMUP_S * 1e9:
            break
    inner = _inner_count((time.perf_counter_ns() - t0) / count, n, warm_n, args.sample_target_s)
    samples: list[float] = []
    spent = last = 0
    while _keep_going(len(samples), spent, last, args):
        got = 0
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            got = run(n)
        last = time.perf_counter_ns() - t0
        spent += last
        _check(got, n, label)
        samples.append(last / (inner * n) / 1000)
    log(f"  {label} N={n}: inner={inner} us/step={[round(s, 1) for s in samples]}")
    return samples


async def time_runs_async(
    run: Callable[[int], Awaitable[int]],
    n: int,
    args: argparse.Namespace,
    label: str,
    cpu: list[float] | None = None,
) -> list[float]:
    """Async twin of time_runs_sync: every run is awaited inside one event loop.

    When `cpu` is given, it receives this process's CPU microseconds per step for each sample
    (for W3 the server is another process, so this is what the client side costs, which a
    loaded machine's wall times hide).
    """
    warm_n = min(n, 100)
    t0 = time.perf_counter_ns()
    count = 0
    while True:
        _check(await run(warm_n), warm_n, label)
        count += 1
        if time.perf_counter_ns() - t0 >= WARMUP_S * 1e9:
            break
    inner = _inner_count((time.perf_counter_ns() - t0) / count, n, warm_n, args.sample_target_s)
    samples: list[float] = []
    spent = last = 0
    while _keep_going(len(samples), spent, last, args):
        got = 0
        c0 = time.process_time_ns()
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            got = await run(n)
        last = time.perf_counter_ns() - t0
        if cpu is not None:
            cpu.append((time.process_time_ns() - c0) / (inner * n) / 1000)
        spent += last
        _check(got, n, label)
        samples.append(last / (inner * n) / 1000)
    cpu_note = f" cpu us/step={[round(s, 1) for s in cpu]}" if cpu else ""
    log(f"  {label} N={n}: inner={inner} us/step={[round(s, 1) for s in samples]}{cpu_note}")
    return samples


def measure_steps(
    prefix: str,
    run: Callable[[int], int] | Callable[[int], Awaitable[int]],
    sizes: tuple[int, ...],
    args: argparse.Namespace,
    is_async: bool,
) -> dict:
    """Metrics {prefix}_us_per_step_n{N} for each N (prefix is w1 or w3)."""
    out = {}
    if is_async:

        async def all_sizes() -> None:
            for n in sizes:
                cpu: list[float] | None = [] if prefix.startswith("w3") else None
                samples = await time_runs_async(run, n, args, prefix, cpu)
                out[f"{prefix}_us_per_step_n{n}"] = summarize(samples)
                if cpu:
                    out[f"{prefix}_cpu_us_per_step_n{n}"] = summarize(cpu)

        asyncio.run(all_sizes())
    else:
        for n in sizes:
            samples = time_runs_sync(run, n, args, prefix)
            out[f"{prefix}_us_per_step_n{n}"] = summarize(samples)
    return out


# --- W2: concurrent runs, each repeat in a fresh process ----------------------------------------


def current_rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark (VmHWM, also ru_maxrss) to the current RSS."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def measure_w2_once(run: Callable[[int], Awaitable[int]], runs: int = W2_RUNS) -> dict:
    """One W2 repeat; run(steps) is one framework run whose model calls sleep 10 ms each.

    Memory: RSS high-water (getrusage ru_maxrss, reset through /proc/self/clear_refs just
    before the workload) minus the RSS just before the workload, after a warmup of
    W2_WARMUP_RUNS concurrent runs and a gc.collect().
    """
    warm = await asyncio.gather(*(run(W2_STEPS) for _ in range(W2_WARMUP_RUNS)))
    for got in warm:
        _check(got, W2_STEPS, "w2 warmup")
    del warm
    gc.collect()
    if os.environ.get("BENCH_GC") == "server":  # the server setting the README describes
        gc.freeze()
        gc.set_threshold(50_000, 20, 100)
    rss0 = current_rss_bytes()
    hwm_reset = reset_peak_rss()
    cpu0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    results = await asyncio.gather(*(run(W2_STEPS) for _ in range(runs)))
    wall_ns = time.perf_counter_ns() - t0
    cpu_ns = time.process_time_ns() - cpu0
    peak = peak_rss_bytes()
    for got in results:
        _check(got, W2_STEPS, "w2")
    return {
        "wall_s": wall_ns / 1e9,
        "cpu_s": cpu_ns / 1e9,
        "runs": runs,
        "steps": runs * W2_STEPS,
        "mem_bytes": max(0, peak - rss0),
        "hwm_reset": hwm_reset,
    }


def w2_child_main(run: Callable[[int], Awaitable[int]], args: argparse.Namespace) -> None:
    """Entry point of the --w2-once child: print one JSON line with that repeat's figures.

    `BENCH_LOOP=uvloop` in the environment runs the batch on uvloop instead of asyncio's loop;
    `BENCH_GC=server` freezes the warm heap and raises the first GC threshold before the batch
    (an application's setting for servers, not the library's default).
    """
    if os.environ.get("BENCH_LOOP") == "uvloop":
        import uvloop

        figures = uvloop.run(measure_w2_once(run, args.w2_runs))
    else:
        figures = asyncio.run(measure_w2_once(run, args.w2_runs))
    print(json.dumps(figures), flush=True)


def measure_w2(script: str, extra_args: list[str], args: argparse.Namespace) -> dict:
    """W2 repeats, each in a fresh interpreter (clean heap, clean RSS high-water)."""
    walls, ratios, cpus, mems = [], [], [], []
    spent = last = 0
    while _keep_going(len(walls), spent, last, args):
        t0 = time.perf_counter_ns()
        proc = subprocess.run(
            [sys.executable, script, "--w2-once", "--w2-runs", str(args.w2_runs), *extra_args],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        last = time.perf_counter_ns() - t0
        spent += last
        if proc.returncode != 0:
            raise RuntimeError(f"w2 child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        rec = last_json_line(proc.stdout)
        walls.append(rec["wall_s"])
        ratios.append(rec["wall_s"] / W2_IDEAL_S)
        cpus.append(rec["cpu_s"] * 1e6 / rec["steps"])
        mems.append(rec["mem_bytes"] / 1e6)
        log(
            f"  w2 repeat {len(walls)}: runs={rec['runs']} wall={rec['wall_s']:.3f}s "
            f"cpu/step={cpus[-1]:.1f}us mem={mems[-1]:.1f}MB"
        )
    return {
        "w2_runs": args.w2_runs,
        "w2_wall_s": summarize(walls),
        "w2_wall_ratio": summarize(ratios),
        "w2_cpu_us_per_step": summarize(cpus),
        "w2_mem_mb": summarize(mems),
    }


# --- output --------------------------------------------------------------------------------------


def last_json_line(text: str) -> dict:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in output")


def package_versions(*names: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def runtime_info() -> dict[str, str]:
    return {
        "language": "python",
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        # The interpreter's name only: a full path would name the machine it ran on.
        "executable": os.path.basename(sys.executable),
    }


def emit(framework: str, variant: str, versions: dict, metrics: dict, notes: list[str]) -> None:
    record = {
        "framework": framework,
        "variant": variant,
        "runtime": runtime_info(),
        "versions": versions,
        "metrics": metrics,
        "notes": notes,
    }
    print(json.dumps(record), flush=True)
