"""What an agent's request holds of a long thread: `ContextPolicy` (by messages and tokens,
with an optional summariser), a capability of the request stage. Import it from `agents`."""

from agents.capabilities.context.policy import ContextPolicy

__all__ = ["ContextPolicy"]
