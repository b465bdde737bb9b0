"""Agents and networks as tools (`agent.as_tool()`, `network.as_tool()`): a call runs a sub-run
whose usage, limits, trace and events roll up to the caller's run. See docs/subagents.md."""

from agents.capabilities.subagents.failing import FailingSubagents, raises_on_failure
from agents.capabilities.subagents.tools import (
    SubagentTool,
    agent_network_of,
    answering,
    subrun_tool,
)

__all__ = [
    "FailingSubagents",
    "SubagentTool",
    "agent_network_of",
    "answering",
    "raises_on_failure",
    "subrun_tool",
]
