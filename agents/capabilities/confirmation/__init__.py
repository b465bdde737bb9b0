"""Tool calls that wait for a person's confirmation (`@tool(requires_confirmation=True)`)."""

from agents.capabilities.confirmation.capability import Confirmation

__all__ = ["Confirmation"]
