"""Run every benchmark script and write the comparison table.

    python benchmarks/run_all.py            # full suite (~15 min), writes benchmarks/RESULTS.md
    python benchmarks/run_all.py --quick    # smoke run (~2 min), writes benchmarks/RESULTS-quick.md
    python benchmarks/run_all.py --only floor,agent-network,langgraph-async
    python benchmarks/run_all.py --only long-threads   # per-run cost on long threads only
    python benchmarks/run_all.py --only agui-served    # served AG-UI runs/s, ours and peers
    # durable scale-out (1, 2, 4, 8 workers, ours against bare DBOS and ideal, and kill -9
    # recovery), before and after side by side:
    python benchmarks/run_all.py --only durable-scaleout --before main \
        --output benchmarks/RESULTS-durable.md --json benchmarks/results-durable.json
    # the model path, before and after, side by side and interleaved (W3 only, 3 rounds):
    python benchmarks/run_all.py --before main --rounds 3 --workloads w3 \
        --only floor,floor-aiohttp,agent-network,agent-network-before,agentkit

Each entry of FRAMEWORKS is one script printing one JSON line (schema: bench_common.py). An
entry whose environment is missing is skipped with a note (so is "agent-network-before" without
`--before REF`; it measures the library as it was at git revision REF, with today's scripts):
the peers come from benchmarks/setup_peers.sh, and "agent-network" (ours) from
benchmarks/ours_bench.py, which runs in the interpreter running this file (the project's
environment). When ours is present, every peer figure also shows the ratio ours/peer (median
over median; every figure is lower-is-better, so a ratio below 1 means ours is cheaper).

All scripts share ONE fake OpenAI server (fake_openai_server.py) for W3, started here.
`--rounds R` runs the whole list R times in turn, so every entry sees the same changes of the
machine's load; each figure is then the median over all rounds' samples.
"""

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_common import last_json_line, summarize  # noqa: E402
from fake_openai_server import FakeOpenAIServer  # noqa: E402
from revisions import export_revision  # noqa: E402

PEERS_PYTHON = HERE / ".venv-peers" / "bin" / "python"
AGENTKIT_DIR = HERE / "peers" / "agentkit"
OURS_KEY = "agent-network"
BEFORE_KEY = "agent-network-before"


@dataclass(frozen=True)
class Framework:
    key: str
    label: str
    runtime: str  # "project" (this interpreter), "before", "peers" (.venv-peers) or "node"
    script: str  # relative to benchmarks/
    args: tuple[str, ...] = ()


# One entry per benchmark script run; add new frameworks here.
FRAMEWORKS = [
    Framework("floor", "bare Python loop (floor; W3 on httpx)", "project", "floor.py"),
    Framework(
        "floor-aiohttp",
        "bare Python loop, W3 on aiohttp (floor)",
        "project",
        "floor.py",
        ("--mode", "aiohttp", "--workloads", "w3"),
    ),
    # Ours: W1, W2 and W3 on the native client (what `openai/...` strings get), then W3 alone
    # through litellm's two routes to an OpenAI-compatible server.
    Framework(OURS_KEY, "agent-network (ours, native client)", "project", "ours_bench.py"),
    # The library at `--before REF` (this checkout's scripts), for before/after figures.
    Framework(BEFORE_KEY, "agent-network before (--before REF)", "before", "ours_bench.py"),
    Framework(
        "agent-network-litellm-openai",
        "agent-network, W3 through litellm's openai/ route",
        "project",
        "ours_bench.py",
        ("--mode", "openai", "--workloads", "w3"),
    ),
    Framework(
        "agent-network-vllm-route",
        "agent-network, W3 through litellm's hosted_vllm/ route",
        "project",
        "ours_bench.py",
        ("--mode", "hosted_vllm", "--workloads", "w3"),
    ),
    Framework(
        "langgraph-sync", "LangGraph, sync", "peers", "peers/langgraph_bench.py", ("--mode", "sync")
    ),
    Framework(
        "langgraph-async",
        "LangGraph, async",
        "peers",
        "peers/langgraph_bench.py",
        ("--mode", "async"),
    ),
    Framework(
        "haystack-sync", "Haystack, sync", "peers", "peers/haystack_bench.py", ("--mode", "sync")
    ),
    Framework(
        "haystack-async", "Haystack, async", "peers", "peers/haystack_bench.py", ("--mode", "async")
    ),
    Framework("openai-agents", "OpenAI Agents SDK", "peers", "peers/openai_agents_bench.py"),
    Framework("agentkit", "AgentKit (Node)", "node", "peers/agentkit/agentkit_bench.mjs"),
]

# (metric key, workload, figure, unit) in table order.
FIGURES = [
    ("w1_us_per_step_n10", "W1", "N=10", "µs/step"),
    ("w1_us_per_step_n100", "W1", "N=100", "µs/step"),
    ("w1_us_per_step_n1000", "W1", "N=1000", "µs/step"),
    ("w2_wall_s", "W2", "wall", "s"),
    ("w2_wall_ratio", "W2", "wall / ideal 0.1 s", "×"),
    ("w2_cpu_us_per_step", "W2", "CPU per step", "µs"),
    ("w2_mem_mb", "W2", "peak RSS above baseline", "MB"),
    ("w3_us_per_step_n10", "W3", "N=10", "µs/step"),
    ("w3_us_per_step_n100", "W3", "N=100", "µs/step"),
    ("w3s_us_per_step_n10", "W3 streamed", "N=10", "µs/step"),
    ("w3s_us_per_step_n100", "W3 streamed", "N=100", "µs/step"),
    ("w3_cpu_us_per_step_n10", "W3 client CPU", "N=10", "µs/step"),
    ("w3_cpu_us_per_step_n100", "W3 client CPU", "N=100", "µs/step"),
    ("w3s_cpu_us_per_step_n10", "W3 streamed client CPU", "N=10", "µs/step"),
    ("w3s_cpu_us_per_step_n100", "W3 streamed client CPU", "N=100", "µs/step"),
]
SUMMARY_FIGURES = FIGURES

CHILD_ENV = {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "LANGSMITH_TRACING": "false",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def command_for(fw: Framework, before: Path | None = None) -> tuple[list[str] | None, str]:
    """The command running this entry, or None and why it is skipped."""
    script = HERE / fw.script
    if not script.exists():
        return None, f"{fw.script} not present"
    if fw.runtime == "project":
        return [sys.executable, str(script), *fw.args], ""
    if fw.runtime == "before":
        if before is None:
            return None, "no --before REF given"
        return [sys.executable, str(script), *fw.args], ""
    if fw.runtime == "peers":
        if not PEERS_PYTHON.exists():
            return None, "peers venv missing: run `bash benchmarks/setup_peers.sh python`"
        return [str(PEERS_PYTHON), str(script), *fw.args], ""
    if fw.runtime == "node":
        node = shutil.which("node")
        if node is None:
            return None, "node not found"
        if not (AGENTKIT_DIR / "node_modules" / "@inngest" / "agent-kit").exists():
            return None, "AgentKit not installed: run `bash benchmarks/setup_peers.sh node`"
        return [node, str(script), *fw.args], ""
    return None, f"unknown runtime {fw.runtime!r}"


def machine_info() -> dict:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
                break
    node = shutil.which("node")
    node_version = (
        subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
        if node
        else "not found"
    )
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": platform.release(),
        "loadavg": open("/proc/loadavg").read().split()[:3],
        "python": platform.python_version(),
        "node": node_version,
    }


def loadavg_1min() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def fmt_ratio(value: float) -> str:
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"


def cell(metric: dict | None, ours: dict | None = None, w2_runs: int | None = None) -> str:
    if not metric:
        return "–"
    text = f"{fmt(metric['median'])} ({fmt(metric['min'])}–{fmt(metric['max'])})"
    extras = []
    if metric["n"] < 5:
        extras.append(f"n={metric['n']}")
    if w2_runs and w2_runs != 1000:
        extras.append(f"{w2_runs} runs")
    if extras:
        text += f" [{', '.join(extras)}]"
    if ours:
        text += f"<br>ours/peer {fmt_ratio(ours['median'] / metric['median'])}"
    return text


def render(results: list[dict], machine: dict, quick: bool, elapsed_s: float) -> str:
    ours = next((r for r in results if r["key"] == OURS_KEY and r.get("record")), None)
    ours_metrics = ours["record"]["metrics"] if ours else {}
    out = ["# Benchmark results: agent-network against its peers", ""]
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    kind = "QUICK smoke run (fewer repeats, smaller W2, no N=1000)" if quick else "full run"
    out += [
        f"Generated by `python benchmarks/run_all.py{' --quick' if quick else ''}` on {when} "
        f"({kind}, {elapsed_s / 60:.1f} min).",
        "",
        f"Machine: {machine['nproc']} cores ({machine['cpu']}), {machine['memory_gib']} GiB "
        f"memory, Linux {machine['kernel']}, load average at start "
        f"{' '.join(machine['loadavg'])}. Python {machine['python']} (runner), "
        f"Node {machine['node']}. The machine is shared: other work may run during the suite; "
        "the 1-minute load average before and after each framework is in the table below.",
        "",
        "## Frameworks",
        "",
        "| framework | status | runtime | versions |",
        "| --- | --- | --- | --- |",
    ]
    for r in results:
        rec = r.get("record")
        if rec:
            rt = rec["runtime"]
            runtime = f"{rt['language']} {rt['version']}"
            versions = ", ".join(f"{k} {v}" for k, v in rec["versions"].items())
            status = f"ran ({r['seconds']:.0f} s, load {r['load_before']}→{r['load_after']})"
            out.append(f"| {r['label']} | {status} | {runtime} | {versions} |")
        else:
            out.append(f"| {r['label']} | skipped: {r['why']} | – | – |")
    ran = [r for r in results if r.get("record")]
    ratio_note = (
        "Under each peer figure: ours/peer, the median of agent-network over the peer's median "
        "(below 1: ours is cheaper)."
        if ours
        else "agent-network (ours) did not run, so there are no ours/peer ratios yet."
    )
    out += [
        "",
        "## Summary: median (min–max) per figure",
        "",
        "Every figure is lower-is-better. W1 and W3 in µs per step; W2 wall time over the ideal "
        "0.1 s, CPU µs per step and peak memory in MB. [n=k]: fewer than 5 repeats (the "
        "per-figure time budget ran out). " + ratio_note,
        "",
    ]
    header = ["framework"] + [f"{w} {fig} ({unit})" for _, w, fig, unit in SUMMARY_FIGURES]
    out.append("| " + " | ".join(header) + " |")
    out.append("| " + " | ".join("---" for _ in header) + " |")
    for r in ran:
        metrics = r["record"]["metrics"]
        is_ours = r["key"] == OURS_KEY
        row = [r["label"]]
        for key, *_ in SUMMARY_FIGURES:
            runs = metrics.get("w2_runs") if key.startswith("w2") else None
            peer_ours = None if is_ours or key not in ours_metrics else ours_metrics[key]
            row.append(cell(metrics.get(key), peer_ours, runs))
        out.append("| " + " | ".join(row) + " |")
    out += [
        "",
        "## Every figure",
        "",
        "| workload | figure | unit | framework | median | min | max | n | ours/peer |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, workload, figure, unit in FIGURES:
        for r in ran:
            m = r["record"]["metrics"].get(key)
            if not m:
                continue
            ratio = "–"
            if ours and r["key"] != OURS_KEY and key in ours_metrics:
                ratio = fmt_ratio(ours_metrics[key]["median"] / m["median"])
            out.append(
                f"| {workload} | {figure} | {unit} | {r['label']} | {fmt(m['median'])} | "
                f"{fmt(m['min'])} | {fmt(m['max'])} | {m['n']} | {ratio} |"
            )
    out += ["", "## How each framework was built", ""]
    for r in ran:
        for note in r["record"].get("notes", []):
            out.append(f"- {r['label']}: {note}")
    out += ["", METHOD]
    return "\n".join(out) + "\n"


METHOD = """## Method

- W1: one run of N steps; each step is one model call answered at once by a scripted in-process
  model with one tool call; the tool appends one item to a list in the framework's state; the
  framework's code router (conditional edge, hook, tool_use_behavior, network router) stops the
  run when the list holds N items, so every framework makes exactly N model calls. Graphs,
  agents and networks are built once; each run starts from fresh state. Warmup: about 0.5 s of
  runs at min(N, 100) steps. A sample times back-to-back runs (enough to last ~0.25 s, at least
  one run) with `time.perf_counter_ns` (`process.hrtime.bigint` in Node) and divides by the
  number of steps; the garbage collector is left in its default state.
- W2: 1000 runs of 10 steps started at once (`asyncio.gather`, `Promise.all`) in one process;
  every model call awaits a 10 ms sleep (timer). Each repeat runs in a fresh process: a warmup of
  50 concurrent runs, `gc.collect()` (Node: `gc()`), then the timed batch. Wall time; CPU =
  process CPU time (user + system, all threads) / 10,000 steps; memory = RSS high-water
  (getrusage ru_maxrss, reset via /proc/self/clear_refs right before the batch) minus the RSS
  just before the batch, the same method for Python and Node.
- W3: W1 at N = 10 and 100 through each framework's own OpenAI client against one local fake
  OpenAI-compatible server (benchmarks/fake_openai_server.py, its own process, stdlib asyncio,
  127.0.0.1); the floor uses a bare httpx.AsyncClient loop. W3 streamed: the same with
  `"stream": true` (the server sends each answer as SSE chunks; the floor reads them with a bare
  line loop); ours streams through the model's `stream=True`.
- Repeats: 5 per figure, median, min and max. A per-figure time budget (150 s) stops further
  repeats after the second one when a single repeat is very long (a 90 s N=1000 run); such
  figures show [n=k]. `--budget-s 0` forces all 5.
- The floor: the same work as a bare Python loop over dicts (benchmarks/floor.py).
"""


LONG_THREADS_KEY = "long-threads"
DURABLE_KEY = "durable-scaleout"


def run_long_threads(quick: bool, env: dict[str, str]) -> dict | None:
    """benchmarks/long_threads.py (ours and LangGraph's checkpointers), or None if it failed."""
    cmd = [sys.executable, str(HERE / "long_threads.py"), *(["--quick"] if quick else [])]
    print(f"== long threads: {' '.join(cmd)}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=HERE.parent)
    if proc.returncode != 0:
        print("   long threads failed (see its stderr)", file=sys.stderr)
        return None
    return last_json_line(proc.stdout)


def long_threads_section(record: dict) -> str:
    """The Markdown table of the long-thread figures (ms per run by thread length)."""
    lines = [
        "## Long threads: milliseconds per run by thread length (benchmarks/long_threads.py)",
        "",
        "| framework / store | time | L=10 | L=1,000 | L=10,000 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for framework, backends in record["figures"].items():
        if not isinstance(backends, dict):
            lines.append(f"| {framework}: {backends} | | | | |")
            continue
        for backend, measured in backends.items():
            for kind in ("wall", "cpu"):  # CPU: the benchmarking process's, less noisy
                cells = " | ".join(fmt(measured[kind][n]) for n in ("10", "1000", "10000"))
                lines.append(f"| {framework} {backend} | {kind} | {cells} |")
    return "\n".join(lines) + "\n"


SERVED_KEY = "agui-served"


def run_served(quick: bool, env: dict[str, str], before: str) -> dict | None:
    """benchmarks/agui_served.py: served AG-UI runs/s of ours (in memory with 1 and 100,000
    held threads, on MemoryStore, SQLite and PostgreSQL; with `--before`, the library at that
    revision too) and of pydantic-ai's and Agent Framework's AG-UI servers; None if it failed."""
    cmd = [sys.executable, str(HERE / "agui_served.py"), "--peers"]
    cmd += ["--stores", "memory" if quick else "memory,memorystore,sqlite,postgres"]
    cmd += ["--runs", "300" if quick else "1000", "--rounds", "1" if quick else "3"]
    if before:
        cmd += ["--against", before]
    print(f"== served AG-UI runs: {' '.join(cmd)}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=HERE.parent)
    if proc.returncode != 0:
        print("   served AG-UI runs failed (see its stderr)", file=sys.stderr)
        return None
    return last_json_line(proc.stdout)


def served_section(record: dict) -> str:
    """The Markdown table of the served AG-UI figures."""
    lines = [
        "## Served AG-UI runs (benchmarks/agui_served.py)",
        "",
        f"{record['runs']} runs on new threads, {record['clients']} clients at once, over a "
        "real socket; medians of the rounds.",
        "",
        "Statements, transactions and round trips per run: the database work of a served run on"
        " SQLite and PostgreSQL, counted in a server of its own (not the timed one).",
        "",
        "| server | runs/s | server CPU ms per run | events per run | statements per run |"
        " transactions per run | round trips per run |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, figures in record["results"].items():
        work = [
            f"{figures[key]:g}" if key in figures else "-"
            for key in ("statements_per_run", "transactions_per_run", "round_trips_per_run")
        ]
        lines.append(
            f"| {name} | {figures['runs_per_s']:.0f} | "
            f"{figures['server_cpu_ms_per_run']:.3f} | {figures['events_per_run']:.0f} | "
            + " | ".join(work)
            + " |"
        )
    return "\n".join(lines) + "\n"


def run_durable_scaleout(quick: bool, env: dict[str, str], before: str) -> dict | None:
    """benchmarks/durable_scaleout.py (on a PostgreSQL server it starts), or None if it failed."""
    cmd = [sys.executable, str(HERE / "durable_scaleout.py"), *(["--quick"] if quick else [])]
    if before:
        cmd += ["--before", before]
    else:
        cmd += ["--variants", "ours,dbos"]
    print(f"== durable scale-out: {' '.join(cmd)}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=HERE.parent)
    if proc.returncode != 0:
        print("   durable scale-out failed (see its stderr)", file=sys.stderr)
        return None
    record: dict = last_json_line(proc.stdout)["durable_scaleout"]
    return record


def durable_section(record: dict) -> str:
    """The Markdown tables of the durable scale-out figures."""
    sleep_ms = round(record["sleep_s"] * 1000)
    lines = [
        "## Durable scale-out on PostgreSQL (benchmarks/durable_scaleout.py)",
        "",
        f"A run: {record['calls']} model calls of {sleep_ms} ms (the model is the bottleneck), "
        f"{record['steps']} recorded steps; {record['concurrency']} runs at once per worker, "
        f"{record['rounds']} runs per slot. Throughput as a share of ideal (every slot busy "
        "all the time); CPU per recorded step of the workers and PostgreSQL together; an idle "
        "worker's CPU; the wait from enqueue to start.",
        "",
        "| variant | workers | runs/s | of ideal | CPU per step | workers / PostgreSQL "
        "| idle worker | wake | connections per worker | load |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in record["scale"]:
        lines.append(
            f"| {row['variant']} | {row['workers']} | {row['runs_per_s']} | "
            f"{row['ratio_of_ideal']:.2f} | {row['cpu_ms_per_step']:.2f} ms | "
            f"{row['worker_cpu_ms_per_step']:.2f} / {row['pg_cpu_ms_per_step']:.2f} ms | "
            f"{row['idle_cpu_pct_per_worker']:.1f}% | {row['wake_ms']:.0f} ms | "
            f"{row.get('connections_per_worker', '–')} | {row['load']} |"
        )
    lines += [
        "",
        "| variant | enqueue (client CPU) | enqueue (wall) | PostgreSQL CPU per enqueue | load |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in record["enqueue"]:
        lines.append(
            f"| {row['variant']} | {row['enqueue_cpu_ms']:.2f} ms | "
            f"{row['enqueue_wall_ms']:.2f} ms | {row['enqueue_pg_cpu_ms']:.2f} ms | {row['load']} |"
        )
    lines += [
        "",
        "| variant | runs of the killed worker | recovered after kill -9 | load |",
        "| --- | --- | --- | --- |",
    ]
    for row in record["recovery"]:
        if row["recovered"]:
            when = f"{row['recovery_s_median']:.2f} s median, {row['recovery_s_max']:.2f} s max"
        else:
            when = f"not within {row['waited_s']:.0f} s (still {', '.join(row['statuses'])})"
        lines.append(f"| {row['variant']} | {row['runs_killed']} | {when} | {row['load']} |")
    return "\n".join(lines) + "\n"


def run_one(
    fw: Framework,
    base_url: str,
    extra: list[str],
    timeout_s: int,
    env: dict[str, str],
    peer_env: dict[str, str],
    before: Path | None,
) -> dict:
    """Run one entry once: its record, or why it has none."""
    entry: dict = {"key": fw.key, "label": fw.label}
    cmd, why = command_for(fw, before)
    if cmd is None:
        entry["why"] = why
        print(f"== {fw.label}: skipped ({why})", file=sys.stderr, flush=True)
        return entry
    cmd += ["--base-url", base_url, *extra]
    print(f"== {fw.label}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    if fw.runtime == "before":
        env = {**env, "AGENT_NETWORK_SOURCE": str(before)}
    t0 = time.perf_counter()
    entry["load_before"] = loadavg_1min()
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            text=True,
            timeout=timeout_s,
            env=env if fw.runtime in ("project", "before") else peer_env,
            cwd=HERE.parent,
        )
    except subprocess.TimeoutExpired:
        entry["why"] = f"timed out after {timeout_s} s"
        return entry
    entry["seconds"] = time.perf_counter() - t0
    entry["load_after"] = loadavg_1min()
    if proc.returncode != 0:
        entry["why"] = f"failed with exit code {proc.returncode} (see its stderr)"
        return entry
    try:
        entry["record"] = last_json_line(proc.stdout)
    except ValueError as exc:
        entry["why"] = f"printed no result: {exc}"
    print(f"   done in {entry['seconds']:.0f} s", file=sys.stderr, flush=True)
    return entry


def merge_round(results: list[dict], entry: dict) -> None:
    """Add one round's entry: a new one, or its samples pooled with the earlier rounds'."""
    known = next((r for r in results if r["key"] == entry["key"]), None)
    if known is None:
        results.append(entry)
        return
    if not entry.get("record"):
        return
    if not known.get("record"):
        known.clear()
        known.update(entry)
        return
    known["seconds"] += entry["seconds"]
    known["load_after"] = entry["load_after"]
    metrics = known["record"]["metrics"]
    for key, metric in entry["record"]["metrics"].items():
        if isinstance(metric, dict) and isinstance(metrics.get(key), dict):
            metrics[key] = summarize(metrics[key]["samples"] + metric["samples"])
        else:
            metrics.setdefault(key, metric)


def main() -> None:
    p = argparse.ArgumentParser(description="Run the benchmark suite and write RESULTS.md.")
    p.add_argument("--quick", action="store_true", help="smoke run, about 2 minutes")
    p.add_argument("--only", default="", help="comma list of framework keys to run")
    p.add_argument("--skip", default="", help="comma list of framework keys to skip")
    p.add_argument("--output", default=None, help="markdown output path")
    p.add_argument("--json", default=None, help="raw JSON output path")
    p.add_argument("--list", action="store_true", help="list the framework keys and exit")
    p.add_argument("--rounds", type=int, default=1, help="run the list this many times in turn")
    p.add_argument("--before", default="", help="git revision measured as agent-network-before")
    args, passthrough = p.parse_known_args()
    if args.list:
        for fw in FRAMEWORKS:
            cmd, why = command_for(fw)
            print(f"{fw.key:16} {fw.label:28} {'ready' if cmd else 'skip: ' + why}")
        print(f"{LONG_THREADS_KEY:16} {'long threads (ours, LangGraph)':28} section")
        print(f"{SERVED_KEY:16} {'served AG-UI runs':28} section")
        print(f"{DURABLE_KEY:16} {'durable scale-out (PostgreSQL)':28} section")
        return
    only = {k for k in args.only.split(",") if k}
    skip = {k for k in args.skip.split(",") if k}
    suffix = "-quick" if args.quick else ""
    output = Path(args.output) if args.output else HERE / f"RESULTS{suffix}.md"
    json_out = Path(args.json) if args.json else HERE / f"results{suffix}.json"
    extra = (["--quick"] if args.quick else []) + passthrough
    timeout_s = 600 if args.quick else 1800
    env = {**os.environ, **CHILD_ENV}
    # The OpenAI Agents SDK's package is also named `agents`: a PYTHONPATH pointing at this
    # checkout would hand its benchmark our package instead of its own.
    peer_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    machine = machine_info()
    before = export_revision(args.before) if args.before else None
    results: list[dict] = []
    started = time.perf_counter()
    with FakeOpenAIServer() as server:
        for round_number in range(args.rounds):
            for fw in FRAMEWORKS:
                if (only and fw.key not in only) or fw.key in skip:
                    continue
                entry = run_one(fw, server.base_url, extra, timeout_s, env, peer_env, before)
                if args.rounds > 1:
                    print(f"   (round {round_number + 1} of {args.rounds})", file=sys.stderr)
                merge_round(results, entry)
    if before is not None:
        for entry in results:
            if entry["key"] == BEFORE_KEY:
                entry["label"] = f"agent-network before ({args.before})"
    long_threads = None
    if (not only or LONG_THREADS_KEY in only) and LONG_THREADS_KEY not in skip:
        long_threads = run_long_threads(args.quick, env)
    served = None
    if (not only or SERVED_KEY in only) and SERVED_KEY not in skip:
        served = run_served(args.quick, env, args.before)
    durable = None
    if (not only or DURABLE_KEY in only) and DURABLE_KEY not in skip:
        durable = run_durable_scaleout(args.quick, env, args.before)
    elapsed = time.perf_counter() - started
    raw = {"machine": machine, "quick": args.quick, "elapsed_s": elapsed, "results": results}
    raw["long_threads"] = long_threads
    raw["agui_served"] = served
    raw["durable_scaleout"] = durable
    # The figures first: a table that fails to render must not lose a long invocation's data.
    json_out.write_text(json.dumps(raw, indent=1) + "\n")
    text = render(results, machine, args.quick, elapsed)
    if long_threads is not None:
        text += "\n" + long_threads_section(long_threads)
    if served is not None:
        text += "\n" + served_section(served)
    if durable is not None:
        text += "\n" + durable_section(durable)
    output.write_text(text)
    print(f"wrote {output} and {json_out} in {elapsed / 60:.1f} min", file=sys.stderr)


if __name__ == "__main__":
    main()
