// Sub-agents seen by the official @ag-ui/client HttpAgent: a supervisor whose tools are an
// agent and a network (agent-network's `as_tool`), one of which waits for an approval.
//
// Usage: node subagents.mjs URL THREAD_ID ['["a message", "approve", ...]']
// Prints one JSON report: every event of every run (type, subagentRunId and the fields that
// tie a sub-agent to its parent), the client's messages and pending interrupts after each run,
// and every problem the client would only warn about (any console warning or error counts).

import { HttpAgent } from "@ag-ui/client";

const [url, threadId] = process.argv.slice(2);
const problems = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => problems.push(`${level}: ${args.map(String).join(" ")}`);
}

const agent = new HttpAgent({ url, threadId });
let counter = 0;

function pick(event) {
  const kept = { type: event.type };
  for (const key of [
    "subagentRunId",
    "parentSubagentRunId",
    "parentToolCallId",
    "name",
    "toolCallId",
    "toolCallName",
    "messageId",
    "outcome",
    "result",
  ]) {
    if (event[key] !== undefined) kept[key] = event[key];
  }
  return kept;
}

async function run(params = {}) {
  const runId = `sub-run-${++counter}`;
  const seen = { events: [], started: [], finished: [], errors: [] };
  const subscriber = {
    onEvent({ event }) {
      seen.events.push(pick(event));
      if (event.type === "RUN_ERROR") problems.push(`RUN_ERROR: ${event.message}`);
    },
    onSubagentStartedEvent({ event }) {
      seen.started.push(event.subagentRunId);
    },
    onSubagentFinishedEvent({ event }) {
      seen.finished.push(event.subagentRunId);
    },
    onSubagentErrorEvent({ event }) {
      seen.errors.push(event.subagentRunId);
    },
  };
  await agent.runAgent({ runId, ...params }, subscriber);
  const last = seen.events.at(-1);
  if (!last || last.type !== "RUN_FINISHED") problems.push(`run ${runId} did not end with RUN_FINISHED`);
  seen.messages = agent.messages.map((m) => ({
    id: m.id,
    role: m.role,
    subagentRunId: m.subagentRunId,
    content: m.content,
    toolCalls: (m.toolCalls ?? []).map((c) => c.function.name),
  }));
  seen.interrupts = structuredClone(agent.pendingInterrupts);
  return seen;
}

// The turns: a user message each, or "approve" (answer every pending interrupt with yes).
const turns = JSON.parse(process.argv[4] ?? '["Refund order 7", "approve", "Thanks"]');
const report = { runs: [], problems };
try {
  for (const [index, turn] of turns.entries()) {
    if (turn === "approve") {
      const resume = agent.pendingInterrupts.map((i) => ({
        interruptId: i.id,
        status: "resolved",
        payload: { approved: true },
      }));
      report.runs.push(await run({ resume }));
    } else {
      agent.addMessage({ id: `m-${index}`, role: "user", content: turn });
      report.runs.push(await run());
    }
  }
} catch (error) {
  problems.push(`the client failed: ${error.message ?? String(error)}`);
}
console.log(JSON.stringify(report));
