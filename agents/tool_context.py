"""`ToolContext`: what a tool may ask for by annotating a parameter with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from network.state.state import State


@dataclass(slots=True)
class ToolContext:
    """The run around a tool call. Injected, never shown to the model.

    `state` is the tool's own view of the run's state: reads see the run's state plus this
    tool's writes; the writes are applied when the call succeeds and dropped when it fails.
    """

    network: Any
    agent: Any
    state: State
    tool_call_id: str
    run: Any = None  # the RunContext

    @property
    def kv(self) -> Any:
        """Shortcut for `state.kv`."""
        return self.state.kv
