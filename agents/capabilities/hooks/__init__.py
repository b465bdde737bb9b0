"""Agent lifecycle hooks (`Agent(hooks=...)`): options, and the capability that runs them."""

from agents.capabilities.hooks.capability import HooksCapability
from agents.capabilities.hooks.options import AgentCall, AgentHooks

__all__ = ["AgentCall", "AgentHooks", "HooksCapability"]
