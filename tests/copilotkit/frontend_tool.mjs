// CopilotKit's own frontend core (`@copilotkit/core`, what @copilotkit/react-core's hooks run
// on) against the runtime of server.mjs, two ways:
//
// - "tool": a frontend tool (`useFrontendTool`) end to end: the core declares the tool, runs
//   the agent through the runtime, runs the tool's handler when the model calls it, and runs
//   the agent again with the result;
// - "interrupt": a confirmation (`useInterrupt`): the run ends on an interrupt, which the
//   core's agent holds as pending (it refuses another run until it is answered), then a run
//   answers it with `resume` (approved);
// - "chat": one user message and its answer, with the headers of `<CopilotKit headers={...}>`
//   taken from the CK_HEADERS environment variable (JSON).
//
// Usage: node frontend_tool.mjs RUNTIME_URL tool|interrupt|chat
// Prints one JSON object: {handled, error, warnings, messages, interrupts, state}.

// The core connects to the runtime only in a browser (it checks for `window`); this is the
// least of one that it reads (an origin for its URLs).
globalThis.window = {
  location: { origin: "http://localhost", href: "http://localhost/" },
  addEventListener() {},
  removeEventListener() {},
};
const { CopilotKitCore } = await import("@copilotkit/core");
const { z } = await import("zod");

const warnings = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => warnings.push(`${level}: ${args.map(String).join(" ")}`);
}
const handled = [];
const core = new CopilotKitCore({
  runtimeUrl: process.argv[2],
  headers: JSON.parse(process.env.CK_HEADERS ?? "{}"),
  tools: [
    {
      name: "confirm_booking",
      description: "Ask the user to confirm the booking in the UI.",
      parameters: z.object({ date: z.string(), guests: z.number().optional() }),
      handler: async (args) => {
        handled.push(args);
        return `confirmed by the user for ${args.date}`;
      },
    },
  ],
});
core.connect();
const deadline = Date.now() + 20_000;
let agent;
while (!(agent = core.getAgent("default")) && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
let error = agent ? null : `the runtime's agent never appeared (${core.runtimeConnectionStatus})`;
const interrupts = [];
try {
  if (agent && process.argv[3] === "interrupt") {
    agent.threadId = "ck-core-interrupt";
    agent.setState({ audience: "engineers" });
    agent.addMessage({ id: "u1", role: "user", content: "Write the note and publish it." });
    await core.runAgent({ agent });
    interrupts.push(...agent.pendingInterrupts);
    const resume = interrupts.map((i) => ({
      interruptId: i.id,
      status: "resolved",
      payload: { approved: true },
    }));
    await core.runAgent({ agent, resume });
  } else if (agent && process.argv[3] === "chat") {
    agent.threadId = "ck-chat";
    agent.addMessage({ id: "u1", role: "user", content: "Hello." });
    await core.runAgent({ agent });
  } else if (agent) {
    agent.threadId = "ck-frontend-tool";
    agent.addMessage({ id: "u1", role: "user", content: "Book a room for Christmas eve." });
    await core.runAgent({ agent });
  }
} catch (failure) {
  error = String(failure?.stack ?? failure);
}
const messages = (agent?.messages ?? []).map((m) => ({
  role: m.role,
  content: m.content ?? null,
  toolCalls: (m.toolCalls ?? []).map((call) => call.function.name),
  toolCallId: m.toolCallId ?? null,
}));
const pending = agent?.pendingInterrupts ?? [];
const state = agent?.state ?? null;
process.stdout.write(
  JSON.stringify({ handled, error, warnings, messages, interrupts, pending, state }),
);
process.exit(0);
