// docs/copilotkit.md's Node runtime: CopilotKit's runtime, its one agent an AG-UI HttpAgent
// pointed at `agent-network serve`. tests/test_copilotkit_recipe.py runs this very file.
import { createServer } from "node:http";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime, InMemoryAgentRunner } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const agentUrl = process.env.AGENT_URL ?? "http://127.0.0.1:8000/";
const runtime = new CopilotRuntime({
  agents: { default: new HttpAgent({ url: agentUrl }) },
  runner: new InMemoryAgentRunner(),
});
const listener = createCopilotNodeListener({ runtime, basePath: "/api/copilotkit", cors: true });
const server = createServer(listener);
server.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => {
  console.log(`CopilotKit runtime on http://127.0.0.1:${server.address().port}/api/copilotkit`);
});
