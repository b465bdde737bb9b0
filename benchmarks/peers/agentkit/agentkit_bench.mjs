// Inngest AgentKit peer benchmark (Node; installed by benchmarks/setup_peers.sh with `npm ci`).
//
// Built the AgentKit way: createAgent with one createTool (zod parameters) whose handler appends
// to network.state.data.items, and createNetwork({agents, router}) whose code router returns the
// agent while the list is short of its target, else undefined; each run is
// network.run(input, {state: createState({items: [], target: N})}).
//
// The model is AgentKit's own openai() adapter in every workload, so each step goes through its
// request builder (history -> OpenAI chat body, zod -> JSON Schema, JSON.stringify) and response
// parser. AgentKit lets no custom model object in (it wraps an adapter with url + format and
// calls the global fetch), so:
//   W1 / W2: globalThis.fetch is replaced by an in-process scripted fetch that answers at once
//            (W2: after a 10 ms timer) with one append_item tool call, as a parsed object; no
//            socket, no server.
//   W3:      the real fetch (undici) against the fake OpenAI server (--base-url, or one started
//            from ../../fake_openai_server.py with python3).
// Prints one JSON line in the schema of benchmarks/bench_common.py.
//
//   node benchmarks/peers/agentkit/agentkit_bench.mjs [--quick] [--base-url URL]

import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAgent, createNetwork, createState, createTool, openai } from "@inngest/agent-kit";
import { z } from "zod";

const HERE = dirname(fileURLToPath(import.meta.url));
const SCRIPT = fileURLToPath(import.meta.url);
const W2_STEPS = 10;
const W2_LATENCY_MS = 10;
const W2_IDEAL_S = (W2_STEPS * W2_LATENCY_MS) / 1000;
const W2_WARMUP_RUNS = 50;
const WARMUP_S = 0.5;

// --- command line (same flags and defaults as bench_common.parse_args) -------------------------

function parseArgs(argv) {
  const a = {
    quick: false,
    repeats: null,
    budgetS: null,
    minRepeats: null,
    w2Runs: null,
    workloads: "w1,w2,w3",
    w1Sizes: null,
    w3Sizes: null,
    baseUrl: null,
    w2Once: false,
    oneCore: 0,
  };
  const valueOf = (i) => {
    if (i + 1 >= argv.length) throw new Error(`missing value for ${argv[i]}`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    if (f === "--quick") a.quick = true;
    else if (f === "--w2-once") a.w2Once = true;
    else if (f === "--repeats") a.repeats = Number(valueOf(i++));
    else if (f === "--budget-s") a.budgetS = Number(valueOf(i++));
    else if (f === "--min-repeats") a.minRepeats = Number(valueOf(i++));
    else if (f === "--w2-runs") a.w2Runs = Number(valueOf(i++));
    else if (f === "--workloads") a.workloads = valueOf(i++);
    else if (f === "--w1-sizes") a.w1Sizes = valueOf(i++);
    else if (f === "--w3-sizes") a.w3Sizes = valueOf(i++);
    else if (f === "--base-url") a.baseUrl = valueOf(i++);
    else if (f === "--one-core") a.oneCore = Number(valueOf(i++));
    else throw new Error(`unknown argument ${f}`);
  }
  const ints = (s) => s.split(",").map((x) => Number(x.trim()));
  a.repeats ??= a.quick ? 3 : 5;
  a.budgetS ??= a.quick ? 20 : 150;
  a.minRepeats = Math.min(a.minRepeats ?? (a.quick ? 1 : 2), a.repeats);
  a.w2Runs ??= a.quick ? 200 : 1000;
  a.workloads = new Set(ints(a.workloads.replace(/w/g, "")).map((x) => `w${x}`));
  a.w1Sizes = a.w1Sizes ? ints(a.w1Sizes) : a.quick ? [10, 100] : [10, 100, 1000];
  a.w3Sizes = a.w3Sizes ? ints(a.w3Sizes) : a.quick ? [10] : [10, 100];
  a.sampleTargetS = a.quick ? 0.1 : 0.25;
  return a;
}

const log = (...parts) => console.error(...parts);
const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function summarize(samples) {
  const s = [...samples].sort((x, y) => x - y);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  const samplesOut = samples.map((x) => Math.round(x * 1000) / 1000);
  return { median, min: s[0], max: s[s.length - 1], n: s.length, samples: samplesOut };
}

function check(got, want, what) {
  if (got !== want) throw new Error(`${what}: run ended with ${got} items, expected ${want}`);
}

function keepGoing(done, spentNs, lastNs, args) {
  if (done >= args.repeats) return false;
  if (done < args.minRepeats || !args.budgetS) return true;
  return (spentNs + lastNs) / 1e9 <= args.budgetS;
}

// --- the AgentKit network ----------------------------------------------------------------------

const appendItem = createTool({
  name: "append_item",
  description: "Append one item to the list in state.",
  parameters: z.object({ item: z.string() }),
  handler: async ({ item }, { network }) => {
    network.state.data.items.push(item);
    return "ok";
  },
});

function makeRunner(model) {
  const agent = createAgent({
    name: "appender",
    system: "You append items to a list with the append_item tool.",
    tools: [appendItem],
    model,
  });
  const network = createNetwork({
    name: "bench",
    agents: [agent],
    defaultModel: model,
    router: ({ network: run }) =>
      run.state.data.items.length < run.state.data.target ? agent : undefined,
  });
  return async (n) => {
    const result = await network.run(`Append ${n} items.`, {
      state: createState({ items: [], target: n }),
    });
    return result.state.data.items.length;
  };
}

// The scripted model: a fetch that returns an OpenAI chat completion with one tool call.
const realFetch = globalThis.fetch;
let serial = 0;

function scriptedCompletion() {
  const k = ++serial;
  const call = {
    id: `call_${k}`,
    type: "function",
    function: { name: "append_item", arguments: JSON.stringify({ item: `item-${k}` }) },
  };
  const message = { role: "assistant", content: null, tool_calls: [call] };
  return {
    id: `chatcmpl-${k}`,
    object: "chat.completion",
    model: "fake",
    choices: [{ index: 0, message, finish_reason: "tool_calls" }],
  };
}

function installScriptedFetch(latencyMs) {
  globalThis.fetch = async () => {
    if (latencyMs) await sleep(latencyMs);
    const body = scriptedCompletion();
    return { ok: true, status: 200, json: async () => body };
  };
}

const SCRIPTED_URL = "http://127.0.0.1:9/v1"; // never contacted: the scripted fetch answers
const scriptedModel = () => openai({ model: "fake", apiKey: "x", baseUrl: SCRIPTED_URL });

// --- W1 / W3 -----------------------------------------------------------------------------------

async function timeRuns(run, n, args, label, cpuSamples = null) {
  const warmN = Math.min(n, 100);
  let t0 = now();
  let count = 0;
  for (;;) {
    check(await run(warmN), warmN, label);
    count++;
    if (Number(now() - t0) >= WARMUP_S * 1e9) break;
  }
  const perRun = Number(now() - t0) / count;
  const est = Math.max((perRun * n) / warmN, 1);
  const inner = Math.max(1, Math.min(100000, Math.floor((args.sampleTargetS * 1e9) / est)));
  const samples = [];
  let spent = 0;
  let last = 0;
  while (keepGoing(samples.length, spent, last, args)) {
    let got = 0;
    const cpu0 = process.cpuUsage();
    t0 = now();
    for (let i = 0; i < inner; i++) got = await run(n);
    last = Number(now() - t0);
    if (cpuSamples) {
      const cpu = process.cpuUsage(cpu0);
      cpuSamples.push((cpu.user + cpu.system) / (inner * n));
    }
    spent += last;
    check(got, n, label);
    samples.push(last / (inner * n) / 1000);
  }
  log(`  ${label} N=${n}: inner=${inner} us/step=${JSON.stringify(samples.map(Math.round))}`);
  return samples;
}

async function measureSteps(prefix, run, sizes, args) {
  const out = {};
  for (const n of sizes) {
    // W3: the client process's CPU per step too (the fake server is another process).
    const cpu = prefix.startsWith("w3") ? [] : null;
    out[`${prefix}_us_per_step_n${n}`] = summarize(await timeRuns(run, n, args, prefix, cpu));
    if (cpu) out[`${prefix}_cpu_us_per_step_n${n}`] = summarize(cpu);
  }
  return out;
}

// --- W2 ----------------------------------------------------------------------------------------

function resetPeakRss() {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

async function w2Once(args) {
  installScriptedFetch(W2_LATENCY_MS);
  const run = makeRunner(scriptedModel());
  const warm = await Promise.all(Array.from({ length: W2_WARMUP_RUNS }, () => run(W2_STEPS)));
  for (const got of warm) check(got, W2_STEPS, "w2 warmup");
  globalThis.gc?.();
  const rss0 = process.memoryUsage.rss();
  const hwmReset = resetPeakRss();
  const cpu0 = process.cpuUsage();
  const t0 = now();
  const results = await Promise.all(Array.from({ length: args.w2Runs }, () => run(W2_STEPS)));
  const wallNs = Number(now() - t0);
  const cpu = process.cpuUsage(cpu0);
  const peak = process.resourceUsage().maxRSS * 1024;
  for (const got of results) check(got, W2_STEPS, "w2");
  return {
    wall_s: wallNs / 1e9,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    runs: args.w2Runs,
    steps: args.w2Runs * W2_STEPS,
    mem_bytes: Math.max(0, peak - rss0),
    hwm_reset: hwmReset,
  };
}

function lastJsonLine(text) {
  const lines = text.split("\n").reverse();
  const line = lines.find((l) => l.trim().startsWith("{"));
  if (!line) throw new Error("no JSON line in output");
  return JSON.parse(line);
}

function measureW2(args) {
  const walls = [];
  const ratios = [];
  const cpus = [];
  const mems = [];
  let spent = 0;
  let last = 0;
  while (keepGoing(walls.length, spent, last, args)) {
    const t0 = now();
    const proc = spawnSync(
      process.execPath,
      ["--expose-gc", SCRIPT, "--w2-once", "--w2-runs", String(args.w2Runs)],
      { encoding: "utf8", maxBuffer: 64 << 20, timeout: 1800_000 },
    );
    last = Number(now() - t0);
    spent += last;
    if (proc.status !== 0) throw new Error(`w2 child failed (${proc.status}):\n${proc.stderr}`);
    const rec = lastJsonLine(proc.stdout);
    walls.push(rec.wall_s);
    ratios.push(rec.wall_s / W2_IDEAL_S);
    cpus.push((rec.cpu_s * 1e6) / rec.steps);
    mems.push(rec.mem_bytes / 1e6);
    log(
      `  w2 repeat ${walls.length}: runs=${rec.runs} wall=${rec.wall_s.toFixed(3)}s ` +
        `cpu/step=${cpus.at(-1).toFixed(1)}us mem=${mems.at(-1).toFixed(1)}MB`,
    );
  }
  return {
    w2_runs: args.w2Runs,
    w2_wall_s: summarize(walls),
    w2_wall_ratio: summarize(ratios),
    w2_cpu_us_per_step: summarize(cpus),
    w2_mem_mb: summarize(mems),
  };
}

// --- what one core drives (benchmarks/one_core.py) ---------------------------------------------

// `--one-core C --base-url URL`: C runs of 10 steps at once over HTTP, batch after batch for
// about a second; prints {calls, wall_s, cpu_s, mem_bytes} (memory: peak RSS above the RSS
// after one warm-up run, the W2 method).
async function oneCore(args) {
  globalThis.fetch = realFetch;
  const run = makeRunner(openai({ model: "fake", apiKey: "x", baseUrl: args.baseUrl }));
  const batch = async () => {
    const got = await Promise.all(Array.from({ length: args.oneCore }, () => run(W2_STEPS)));
    for (const g of got) check(g, W2_STEPS, "one-core");
  };
  check(await run(W2_STEPS), W2_STEPS, "one-core warmup"); // a first connection, JIT
  globalThis.gc?.();
  const rss0 = process.memoryUsage.rss();
  const hwmReset = resetPeakRss();
  const cpu0 = process.cpuUsage();
  const t0 = now();
  let calls = 0;
  do {
    await batch();
    calls += args.oneCore * W2_STEPS;
  } while (Number(now() - t0) < 1e9);
  const wallNs = Number(now() - t0);
  const cpu = process.cpuUsage(cpu0);
  const peak = process.resourceUsage().maxRSS * 1024;
  return {
    calls,
    wall_s: wallNs / 1e9,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    mem_bytes: Math.max(0, peak - rss0),
    hwm_reset: hwmReset,
  };
}

// --- fake server for a standalone W3 -----------------------------------------------------------

function startFakeServer() {
  const server = join(HERE, "..", "..", "fake_openai_server.py");
  const python = process.env.PYTHON || "python3";
  const child = spawn(python, [server, "--port", "0", "--exit-on-stdin-eof"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (chunk) => {
      buf += chunk;
      const line = buf.split("\n")[0];
      if (buf.includes("\n")) {
        if (line.startsWith("READY ")) resolve({ url: line.slice(6).trim(), child });
        else reject(new Error(`fake server did not start: ${line}`));
      }
    });
    child.on("error", reject);
  });
}

// --- main --------------------------------------------------------------------------------------

function pkgVersion(name) {
  const path = join(HERE, "node_modules", ...name.split("/"), "package.json");
  try {
    return JSON.parse(readFileSync(path, "utf8")).version;
  } catch {
    return "not installed";
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.w2Once) {
    console.log(JSON.stringify(await w2Once(args)));
    return;
  }
  if (args.oneCore) {
    console.log(JSON.stringify(await oneCore(args)));
    return;
  }
  const metrics = {};
  const notes = [
    "createNetwork with a code router + createAgent with one createTool; AgentKit's openai() " +
      "adapter throughout; W1/W2 replace globalThis.fetch by an in-process scripted fetch " +
      "(instant / 10 ms timer), W3 uses the real fetch against the fake server.",
  ];
  if (args.workloads.has("w1")) {
    log("agentkit W1");
    installScriptedFetch(0);
    Object.assign(metrics, await measureSteps("w1", makeRunner(scriptedModel()), args.w1Sizes, args));
    globalThis.fetch = realFetch;
  }
  if (args.workloads.has("w2")) {
    log("agentkit W2");
    Object.assign(metrics, measureW2(args));
  }
  if (args.workloads.has("w3")) {
    log("agentkit W3");
    globalThis.fetch = realFetch;
    let server = null;
    let baseUrl = args.baseUrl;
    if (!baseUrl) {
      server = await startFakeServer();
      baseUrl = server.url;
    }
    try {
      const run = makeRunner(openai({ model: "fake", apiKey: "x", baseUrl }));
      Object.assign(metrics, await measureSteps("w3", run, args.w3Sizes, args));
    } finally {
      server?.child.stdin.end();
    }
  }
  const record = {
    framework: "AgentKit",
    variant: "node",
    runtime: { language: "node", version: process.versions.node, v8: process.versions.v8 },
    versions: {
      "@inngest/agent-kit": pkgVersion("@inngest/agent-kit"),
      "@inngest/ai": pkgVersion("@inngest/ai"),
      inngest: pkgVersion("inngest"),
      zod: pkgVersion("zod"),
    },
    metrics,
    notes,
  };
  console.log(JSON.stringify(record));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
