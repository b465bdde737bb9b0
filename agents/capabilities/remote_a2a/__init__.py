"""A remote A2A agent's conversation kept across a thread's turns (`A2AModel`'s agents), and
its task waiting for input answered as an interrupt of the calling run."""

from agents.capabilities.remote_a2a.capability import RemoteContext
from agents.capabilities.remote_a2a.input_required import (
    REMOTE_INPUT,
    continue_remote,
    one_task_a_call,
    waits_remotely,
)

__all__ = [
    "REMOTE_INPUT",
    "RemoteContext",
    "continue_remote",
    "one_task_a_call",
    "waits_remotely",
]
