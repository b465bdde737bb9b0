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
from network.one_argument import refused_as_one_argument
from network.run.agent_call import AgentCall

HOOK_NAMES = ("on_start", "on_response", "on_finish")


@dataclass(slots=True, frozen=True)
class AgentHooks:
    """The hooks of an agent; any may be None."""

    on_start: Callable[[AgentCall], Any] | None = None
    on_response: Callable[[AgentCall], Any] | None = None
    on_finish: Callable[[AgentCall], Any] | None = None

    def __post_init__(self) -> None:
        # a hook that is no function failed only when the agent was called
        for name in HOOK_NAMES:
            _check_hook("AgentHooks", name, getattr(self, name))

    @classmethod
    def coerce(cls, hooks: Any, owner: str = "AgentHooks") -> AgentHooks:
        """Accept `AgentHooks`, a dict of hook functions, or None; anything else is a
        `ConfigurationError` naming `owner` (`"agent 'a'"`) and the option."""
        if hooks is None:
            return cls()
        if isinstance(hooks, AgentHooks):
            return hooks
        if isinstance(hooks, dict):
            unknown = set(hooks) - set(HOOK_NAMES)
            if unknown:
                raise ConfigurationError(
                    f"{owner}: unknown hooks {sorted(map(str, unknown))} (the hooks are "
                    f"{', '.join(HOOK_NAMES)})"
                )
            for name, fn in hooks.items():
                _check_hook(owner, f"hooks[{name!r}]", fn)
            return cls(**hooks)
        raise ConfigurationError(
            f"{owner}: hooks must be AgentHooks, a dict of hook functions or None, got {hooks!r}"
        )

    @property
    def empty(self) -> bool:
        """No hook is set."""
        return self.on_start is None and self.on_response is None and self.on_finish is None


def _check_hook(owner: str, option: str, fn: Any) -> None:
    if fn is None:
        return
    if not callable(fn):
        raise ConfigurationError(f"{owner}: {option} must be a function or None, got {fn!r}")
    shown = refused_as_one_argument(fn)
    if shown is not None:  # else a TypeError from inside every call of the agent
        raise ConfigurationError(
            f"{owner}: {option} {shown} cannot be called as hook(call): a hook "
            "takes the agent call, one positional parameter"
        )


__all__ = ["AgentCall", "AgentHooks"]
