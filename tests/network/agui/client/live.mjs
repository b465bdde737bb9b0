// One run by the official @ag-ui/client HttpAgent, each event printed as it arrives.
//
// Usage: node live.mjs URL THREAD_ID '{"message"?, "state"?, "tools"?}'
// Prints one JSON line per event ({"event": {...}}) the moment the client hands it over, so
// a test can act while the run is still going; then one last line
// {"done": true, status, state, problems}, `problems` being everything the client only warns
// about (a patch that does not apply, RUN_ERROR, a stream cut short).

import { HttpAgent } from "@ag-ui/client";

const [url, threadId, raw] = process.argv.slice(2);
const params = JSON.parse(raw ?? "{}");
const problems = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => problems.push(`${level}: ${args.map(String).join(" ")}`);
}
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const agent = new HttpAgent({ url, threadId, initialState: params.state ?? {} });
if (params.message) {
  agent.addMessage({ id: `m-${Date.now()}`, role: "user", content: params.message });
}
let status = 200;
let finished = false;
try {
  await agent.runAgent(
    { runId: `run-${Date.now()}`, tools: params.tools ?? [] },
    {
      onEvent({ event }) {
        if (event.type === "RUN_FINISHED") finished = true;
        if (event.type === "RUN_ERROR") problems.push(`RUN_ERROR ${event.message}`);
        say({ event });
      },
    },
  );
} catch (error) {
  status = error.status ?? 0;
  problems.length = 0; // the client logs the refusal it throws: expected
  problems.push(`refused: ${JSON.stringify(error.payload ?? String(error))}`);
}
if (status === 200 && !finished) problems.push("the stream ended without RUN_FINISHED");
say({ done: true, status, state: agent.state, problems });
