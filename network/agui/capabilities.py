"""The server's AG-UI 1.0 capabilities answer (`GET <path>/capabilities`).

An `ag_ui.core.AgentCapabilities`, camelCase JSON. It declares only what the server does:

- identity: the network's name, `type` "agent-network";
- transport: SSE streaming (no WebSocket, binary or resumable streams);
- tools: the network's agents call tools, several at once, and take the client's tools;
- state: STATE_SNAPSHOT and STATE_DELTA; `persistentState` (state carried from run to run on
  a thread); `memory` when threads live on a thread store (`user:` / `app:` keys shared
  beyond one thread);
- multiAgent: the network's agents as its sub-agents (name, description), and the agents and
  networks its agents call as tools (`as_tool`: `delegation`), by tool name;
- execution: `maxIterations`, the network's agent-call limit per run;
- multimodal: no input but text (`multimodal.input` all false): an attached image, audio,
  video or document reaches the model only as a line saying it was not read;
- humanInTheLoop: approvals and AG-UI interrupts (RUN_FINISHED `outcome`, answers in
  `resume`), and `approveWithEdits` when a resume entry may carry edited arguments;
- custom `agentNetwork`: the extra endpoints (`threads`: the principal's thread list;
  `threadRead`: one of its threads, `GET <path>/threads/{threadId}`) and where threads live
  (`store`: "memory" or "store").
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    ExecutionCapabilities,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    MultiAgentCapabilities,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    StateCapabilities,
    SubagentInfo,
    ToolsCapabilities,
    TransportCapabilities,
)

from network.agui.confirmation import EDITS_SUPPORTED
from network.run.context import NetworkLike
from network.run.subrun import SubrunTool


def capabilities(network: NetworkLike, *, stored: bool) -> dict[str, Any]:
    """The capabilities of a server of `network` (`stored`: its threads are on a store)."""
    agents = list(getattr(network, "agents", {}).values())
    subagents = [
        SubagentInfo(name=agent.name, description=getattr(agent, "description", None) or None)
        for agent in agents
    ]
    delegated = _as_tools(agents)
    subagents += delegated
    answer = AgentCapabilities(
        identity=IdentityCapabilities(name=network.name, type="agent-network"),
        transport=TransportCapabilities(streaming=True),
        tools=ToolsCapabilities(supported=True, parallel_calls=True, client_provided=True),
        state=StateCapabilities(snapshots=True, deltas=True, persistent_state=True, memory=stored),
        multi_agent=MultiAgentCapabilities(
            supported=len(agents) > 1 or bool(delegated),
            delegation=True if delegated else None,
            subagents=subagents,
        ),
        execution=ExecutionCapabilities(max_iterations=network.max_iter),
        # messages are text: an attachment reaches the model only as a line saying it was
        # not read (network.agui.messages), so a client can hide its attach button
        multimodal=MultimodalCapabilities(
            input=MultimodalInputCapabilities(
                image=False, audio=False, video=False, pdf=False, file=False
            )
        ),
        human_in_the_loop=HumanInTheLoopCapabilities(
            supported=True,
            approvals=True,
            interrupts=True,
            approve_with_edits=EDITS_SUPPORTED,
        ),
        custom={
            "agentNetwork": {
                "threads": True,
                "threadRead": True,
                "store": "store" if stored else "memory",
            }
        },
    )
    dumped: dict[str, Any] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _as_tools(agents: list[Any]) -> list[SubagentInfo]:
    """The agents' tools that run sub-agents (`agent.as_tool`, `network.as_tool`), by tool
    name: a supervisor delegates to them."""
    found: dict[str, SubagentInfo] = {}
    for agent in agents:
        for tool in (getattr(agent, "tools", None) or {}).values():
            spec = getattr(tool, "subagent", None)
            if isinstance(spec, SubrunTool) and spec.name not in found:
                found[spec.name] = SubagentInfo(
                    name=spec.name, description=spec.description or None
                )
    return list(found.values())
