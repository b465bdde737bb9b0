"""A remote A2A agent's conversation kept across a thread's turns (`A2AModel`'s agents)."""

from agents.capabilities.remote_a2a.capability import RemoteContext

__all__ = ["RemoteContext"]
