"""Handoffs (`Agent(handoffs=[...])`): an agent hands the conversation to another through a
`transfer_to_<agent>` tool. See `agents.capabilities.handoffs.options` and docs/handoffs.md."""

from agents.capabilities.handoffs.capability import Handoffs
from agents.capabilities.handoffs.input_filter import HandoffInput, handed_history
from agents.capabilities.handoffs.options import (
    Handoff,
    handoff,
    handoff_tool_name,
    without_tool_calls,
)

__all__ = [
    "Handoff",
    "HandoffInput",
    "Handoffs",
    "handed_history",
    "handoff",
    "handoff_tool_name",
    "without_tool_calls",
]
