// Drives the agent-network AG-UI server with the official @ag-ui/client HttpAgent.
//
// Usage: node scenarios.mjs http://127.0.0.1:PORT
// Prints one JSON report on stdout; exits 1 when any scenario found a problem.
//
// The client rejects order violations itself, but only warns about (or ignores) a RUN_ERROR,
// a stream cut before RUN_FINISHED, RUN_STARTED ids that differ from the request's, and a
// STATE_DELTA that does not apply. So every run is watched for each of those here, every
// patch is also applied to an independent mirror of the state, and any console warning or
// error from the client counts as a failure.

import { HttpAgent } from "@ag-ui/client";
import jsonpatch from "fast-json-patch";

const base = process.argv[2];
if (!base) {
  console.error("usage: node scenarios.mjs http://127.0.0.1:PORT");
  process.exit(2);
}

const clientWarnings = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => clientWarnings.push(`${level}: ${args.map(String).join(" ")}`);
}

const canonical = (value) =>
  JSON.stringify(value, (_, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );

let runCounter = 0;

// One run: returns what happened; `problems` lists everything the client would let slide.
async function run(agent, label, params = {}) {
  const runId = `${label}-run-${++runCounter}`;
  const seen = { runId, types: [], problems: [], finished: null, mirror: null, deltas: 0 };
  const subscriber = {
    onEvent({ event }) {
      seen.types.push(event.type);
      switch (event.type) {
        case "RUN_STARTED":
          if (event.threadId !== agent.threadId || event.runId !== runId) {
            seen.problems.push(`RUN_STARTED ids ${event.threadId}/${event.runId}`);
          }
          if (!event.protocolVersion) seen.problems.push("RUN_STARTED without protocolVersion");
          break;
        case "STATE_SNAPSHOT":
          seen.mirror = structuredClone(event.snapshot);
          break;
        case "STATE_DELTA":
          seen.deltas += 1;
          try {
            seen.mirror = jsonpatch.applyPatch(
              seen.mirror ?? {},
              structuredClone(event.delta),
              true,
              false,
            ).newDocument;
          } catch (error) {
            seen.problems.push(`STATE_DELTA does not apply: ${error.message}`);
          }
          break;
        case "RUN_ERROR":
          seen.problems.push(`RUN_ERROR: ${event.message}`);
          break;
        case "RUN_FINISHED":
          if (event.threadId !== agent.threadId || event.runId !== runId) {
            seen.problems.push(`RUN_FINISHED ids ${event.threadId}/${event.runId}`);
          }
          seen.finished = event;
          break;
      }
    },
  };
  await agent.runAgent({ ...params, runId }, subscriber);
  if (!seen.finished) seen.problems.push("the stream ended without RUN_FINISHED");
  if (seen.types.at(-1) !== "RUN_FINISHED") seen.problems.push("RUN_FINISHED is not last");
  if (seen.mirror !== null && canonical(seen.mirror) !== canonical(agent.state)) {
    seen.problems.push("the client's state differs from the applied patches");
  }
  return seen;
}

// A request the server must refuse: returns the HTTP error the client raised.
async function refused(agent, label, params = {}) {
  const before = structuredClone(agent.state);
  const mark = clientWarnings.length;
  try {
    await agent.runAgent({ ...params, runId: `${label}-run-${++runCounter}` });
  } catch (error) {
    // The client logs the failure it is about to throw: expected here, and only that.
    const logged = clientWarnings.splice(mark);
    const others = logged.filter((line) => !line.startsWith("error: Agent execution failed"));
    clientWarnings.push(...others);
    const unchanged = canonical(before) === canonical(agent.state);
    return { status: error.status, payload: error.payload, unchanged };
  }
  return { status: 200, payload: null, unchanged: null };
}

function agentFor(path, threadId, initialState = {}) {
  return new HttpAgent({ url: `${base}${path}`, threadId, initialState });
}

function say(agent, text) {
  agent.addMessage({ id: `m-${++runCounter}`, role: "user", content: text });
}

const toast = { title: "Toast", steps: ["toast the bread"], minutes: 3 };

const scenarios = {
  async codegen() {
    const agent = agentFor("/codegen", "codegen-thread");
    say(agent, "Write add(a, b) with a test.");
    const first = await run(agent, "codegen");
    return { threadId: agent.threadId, state: agent.state, runs: [first] };
  },

  async predictive() {
    const agent = agentFor("/recipes", "predictive-thread");
    say(agent, "Pancakes, please.");
    const first = await run(agent, "predictive");
    return { threadId: agent.threadId, state: agent.state, runs: [first] };
  },

  async confirmAccepted() {
    const agent = agentFor("/confirm", "accept-thread", { servings: 2 });
    say(agent, "Pancakes, please.");
    const first = await run(agent, "accept");
    const proposal = structuredClone(agent.state);
    const interrupts = agent.pendingInterrupts.map((i) => i.id);
    const resume = agent.pendingInterrupts.map((i) => ({
      interruptId: i.id,
      status: "resolved",
      payload: { approved: true },
    }));
    const second = await run(agent, "accept", { resume });
    return { threadId: agent.threadId, state: agent.state, runs: [first, second], proposal, interrupts };
  },

  async confirmRejected() {
    const agent = agentFor("/confirm", "reject-thread", { recipe: toast });
    say(agent, "Pancakes, please.");
    const first = await run(agent, "reject");
    const proposal = structuredClone(agent.state);
    const resume = agent.pendingInterrupts.map((i) => ({
      interruptId: i.id,
      status: "resolved",
      payload: { approved: false, reason: "I wanted toast" },
    }));
    const second = await run(agent, "reject", { resume });
    return { threadId: agent.threadId, state: agent.state, runs: [first, second], proposal };
  },

  async interruptIgnored() {
    const agent = agentFor("/confirm", "ignored-thread");
    say(agent, "Pancakes, please.");
    const first = await run(agent, "ignored");
    // another client on the same thread, unaware of the pending interrupt
    const other = agentFor("/confirm", "ignored-thread", agent.state);
    say(other, "Something else.");
    const error = await refused(other, "ignored");
    return { threadId: agent.threadId, state: agent.state, runs: [first], error };
  },

  async clientState() {
    const agent = agentFor("/codegen", "state-thread", {
      topic: "adders",
      "user:language": "python",
    });
    say(agent, "Write add(a, b) with a test.");
    const first = await run(agent, "state");
    agent.setState({ ...agent.state, topic: "multipliers" });
    say(agent, "Again, for multipliers.");
    const second = await run(agent, "state");
    return { threadId: agent.threadId, state: agent.state, runs: [first, second] };
  },

  async invalidState() {
    const agent = agentFor("/codegen", "invalid-thread", { files: "not a dict" });
    say(agent, "Write add(a, b).");
    const invalid = await refused(agent, "invalid");
    const scoped = agentFor("/codegen", "scoped-thread", { "app:flags": { beta: true } });
    say(scoped, "Write add(a, b).");
    const forbidden = await refused(scoped, "scoped");
    return { threadId: agent.threadId, state: agent.state, runs: [], invalid, forbidden };
  },
};

const confirmBooking = {
  name: "confirm_booking",
  description: "Ask the user to confirm the booking in the UI.",
  parameters: {
    type: "object",
    properties: { date: { type: "string" }, guests: { type: "integer" } },
    required: ["date"],
  },
};

Object.assign(scenarios, {
  // A frontend tool (CopilotKit action / dojo human-in-the-loop): the model calls it, the run
  // ends, the client runs it and sends the result with the next run, the model reads it.
  async clientTool() {
    const agent = agentFor("/booking", "booking-thread");
    say(agent, "Book a room for Christmas eve.");
    const context = [{ description: "user timezone", value: "Europe/Paris" }];
    const first = await run(agent, "booking", { tools: [confirmBooking], context });
    const assistant = agent.messages.find((m) => m.role === "assistant" && m.toolCalls?.length);
    const toolCall = assistant?.toolCalls?.[0] ?? null;
    const args = toolCall ? JSON.parse(toolCall.function.arguments) : null;
    if (toolCall) {
      agent.addMessage({
        id: `m-${++runCounter}`,
        role: "tool",
        toolCallId: toolCall.id,
        content: `confirmed by the user for ${args.date}`,
      });
    }
    const second = await run(agent, "booking", { tools: [confirmBooking], context });
    const last = agent.messages.at(-1);
    return {
      threadId: agent.threadId,
      state: agent.state,
      runs: [first, second],
      toolCall,
      args,
      answer: last?.role === "assistant" ? last.content : null,
    };
  },
});

Object.assign(scenarios, {
  // Threads belong to their creator: another user who knows the thread id reads nothing.
  async ownership() {
    const headers = (token) => ({ Authorization: `Bearer ${token}` });
    const alice = new HttpAgent({
      url: `${base}/owned`,
      threadId: "alice-thread",
      initialState: { topic: "alice's secret plans" },
      headers: headers("token-alice"),
    });
    say(alice, "Write add(a, b).");
    const first = await run(alice, "owned");
    const bob = new HttpAgent({ url: `${base}/owned`, threadId: "alice-thread", headers: headers("token-bob") });
    say(bob, "Show me the state.");
    const stranger = await refused(bob, "stranger");
    const anonymous = new HttpAgent({ url: `${base}/owned`, threadId: "anon-thread" });
    say(anonymous, "Hello?");
    const unauthenticated = await refused(anonymous, "anonymous");
    return {
      threadId: alice.threadId,
      state: alice.state,
      runs: [first],
      stranger: { ...stranger, state: bob.state },
      unauthenticated,
    };
  },
});

const report = { scenarios: {}, clientWarnings, failures: [] };
for (const [name, scenario] of Object.entries(scenarios)) {
  try {
    const result = await scenario();
    report.scenarios[name] = result;
    for (const seen of result.runs) {
      for (const problem of seen.problems) report.failures.push(`${name} ${seen.runId}: ${problem}`);
    }
  } catch (error) {
    report.failures.push(`${name}: ${error.stack ?? error}`);
  }
}
if (clientWarnings.length) report.failures.push(`client warnings: ${clientWarnings.join(" | ")}`);
process.stdout.write(JSON.stringify(report));
process.exit(report.failures.length ? 1 : 0);
