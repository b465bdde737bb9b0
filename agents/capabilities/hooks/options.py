"""`AgentHooks`: an agent's lifecycle hooks, the options of the hooks capability.

- `on_start(call)`: before inference; may replace `call.prompt` or `call.history`, or set
  `call.skip = True` to skip the call (it is still recorded, as a skipped result).
- `on_response(call)`: after inference, before tools; `call.response` may be changed (drop or
  rewrite tool calls, edit the text).
- `on_finish(call)`: after tools; returns the `InferenceResult` history keeps (None keeps
  `call.result`).

Each may be sync or async, and gets the call's `AgentCall` (`network.run.agent_call`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError
from network.run.agent_call import AgentCall

HOOK_NAMES = ("on_start", "on_response", "on_finish")


@dataclass(slots=True, frozen=True)
class AgentHooks:
    """The hooks of an agent; any may be None."""

    on_start: Callable[[AgentCall], Any] | None = None
    on_response: Callable[[AgentCall], Any] | None = None
    on_finish: Callable[[AgentCall], Any] | None = None

    @classmethod
    def coerce(cls, hooks: Any) -> AgentHooks:
        """Accept `AgentHooks`, a dict of hook functions, or None."""
        if hooks is None:
            return cls()
        if isinstance(hooks, AgentHooks):
            return hooks
        if isinstance(hooks, dict):
            unknown = set(hooks) - set(HOOK_NAMES)
            if unknown:
                raise ConfigurationError(f"unknown agent hooks: {sorted(unknown)}")
            for name, fn in hooks.items():
                if fn is not None and not callable(fn):
                    raise ConfigurationError(f"agent hook {name!r} is not callable")
            return cls(**hooks)
        raise TypeError(f"hooks must be AgentHooks or a dict, got {hooks!r}")

    @property
    def empty(self) -> bool:
        """No hook is set."""
        return self.on_start is None and self.on_response is None and self.on_finish is None


__all__ = ["AgentCall", "AgentHooks"]
