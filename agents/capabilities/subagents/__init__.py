"""Agents and networks as tools (`agent.as_tool()`, `network.as_tool()`): a call runs a sub-run
whose usage, limits, trace and events roll up to the caller's run. See docs/subagents.md."""

from agents.capabilities.subagents.tools import (
    SubagentTool,
    agent_network_of,
    answering,
    subrun_tool,
)

__all__ = ["SubagentTool", "agent_network_of", "answering", "subrun_tool"]
