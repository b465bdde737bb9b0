"""Agent lifecycle hooks and the `AgentCall` they receive.

- `on_start(call)`: before inference; may replace `call.prompt` or `call.history`, or set
  `call.skip = True` to skip the call (it is still recorded, as a skipped result).
- `on_response(call)`: after inference, before tools; `call.response` may be changed (drop or
  rewrite tool calls, edit the text).
- `on_finish(call)`: after tools; returns the `InferenceResult` history keeps (None keeps
  `call.result`).

Each may be sync or async.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError
from network.history.results import InferenceResult
from network.run.context import AgentLike, RunContext


@dataclass(slots=True, eq=False)
class AgentCall:
    """One agent call in progress, as hooks see it.

    Attributes:
        agent: the `Agent` being called.
        run: the `RunContext` of the run.
        prompt: the system messages about to be sent; `on_start` may replace them.
        history: the conversation about to be sent; `on_start` may replace it.
        skip: set to True in `on_start` to skip the call (recorded as a skipped result).
        response: the `ModelResponse`, from `on_response` on; it may be changed there.
        result: the `InferenceResult`, in `on_finish`.
    """

    agent: AgentLike
    run: RunContext
    prompt: list[Any]
    history: Sequence[Any]
    skip: bool = False
    response: Any = None  # the ModelResponse, from on_response on
    result: InferenceResult | None = None  # from on_finish on

    @property
    def state(self) -> Any:
        """The run's state."""
        return self.run.state

    @property
    def deps(self) -> Any:
        """The run's `deps=` object, as given."""
        return self.run.deps

    async def resource(self, name: str) -> Any:
        """The run's resource `name`, opened on first use and closed when the run ends."""
        return await self.run.resource(name)


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
            unknown = set(hooks) - {"on_start", "on_response", "on_finish"}
            if unknown:
                raise ConfigurationError(f"unknown agent hooks: {sorted(unknown)}")
            for name, fn in hooks.items():
                if fn is not None and not callable(fn):
                    raise ConfigurationError(f"agent hook {name!r} is not callable")
            return cls(**hooks)
        raise TypeError(f"hooks must be AgentHooks or a dict, got {hooks!r}")
