"""The small protocols through which the network talks to agents and routers.

`network` imports neither `agents` nor `routers`: anything with these shapes will do. They are
defined next to `RunContext` (they name it and it names them); this module is their short
address.
"""

from __future__ import annotations

from network.run.context import AgentLike, ArgsListener, CallSettler, NetworkLike, Router

__all__ = ["AgentLike", "ArgsListener", "CallSettler", "NetworkLike", "Router"]
