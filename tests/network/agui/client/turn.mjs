// One turn of a conversation, by a client that kept nothing (a reloaded page): a fresh
// @ag-ui/client HttpAgent on THREAD_ID sends one user message (or only a `resume`).
//
// Usage: node turn.mjs URL THREAD_ID '{"message"?, "state"?, "resume"?, "headers"?}'
// Prints one JSON object: {status, types, state, messages, finished, problems, error}.

import { HttpAgent } from "@ag-ui/client";

const [url, threadId, raw] = process.argv.slice(2);
const params = JSON.parse(raw ?? "{}");
const problems = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => problems.push(`${level}: ${args.map(String).join(" ")}`);
}

const agent = new HttpAgent({
  url,
  threadId,
  initialState: params.state ?? {},
  headers: params.headers ?? {},
});
if (params.message) {
  agent.addMessage({ id: `m-${Date.now()}-${Math.random()}`, role: "user", content: params.message });
}
const seen = { status: 200, types: [], finished: null, error: null };
const runId = `run-${Date.now()}-${Math.random()}`.replace(".", "");
try {
  await agent.runAgent(
    { runId, ...(params.resume ? { resume: params.resume } : {}) },
    {
      onEvent({ event }) {
        seen.types.push(event.type);
        if (event.type === "RUN_FINISHED") seen.finished = event;
        if (event.type === "RUN_ERROR") seen.error = event;
      },
    },
  );
} catch (error) {
  seen.status = error.status ?? 0;
  seen.error = error.payload ?? String(error);
  problems.length = 0; // the client logs the refusal it throws: expected
}
if (seen.status === 200 && !seen.finished) problems.push("the stream ended without RUN_FINISHED");
process.stdout.write(
  JSON.stringify({ ...seen, state: agent.state, messages: agent.messages, problems }),
);
