"""Tools that run in the client: declared to the model, never run by the server.

A `ClientTool` has a name, a description and a JSON Schema for its parameters, and no
function. An agent offers it to its model like any tool; when the model calls it, the call is
not run: it is added to `RunContext.engine.pending_tool_calls` (the other calls of the same
answer run as usual), and the run ends after that agent call with `StopReason.CLIENT_TOOL`, the
pending calls in `RunResult.pending_tool_calls`. Whoever runs the tool (a browser, a person, another
process) sends its result in the next run's conversation as a tool message.

They come from two places: `agents.client_tool(...)` in an agent's `tools=`, and an AG-UI
request's `tools` (CopilotKit frontend actions), which the server offers to every agent of the
network for that run through `RunContext.engine.client_tools`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from network.errors import ConfigurationError
from network.run.tool_names import check_tool_name

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ClientTool:
    """A tool declared to the model whose calls end the run instead of running here."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_PARAMETERS))

    requires_confirmation: ClassVar[bool] = False  # read by the dispatcher like any tool's

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigurationError(f"a client tool needs a name, got {self.name!r}")
        # a name providers refuse failed the run's first model request, after it was paid for
        check_tool_name("client tool name", self.name)
        if not isinstance(self.description, str):
            raise ConfigurationError(
                f"client tool {self.name!r}: description must be a string, "
                f"got {type(self.description).__name__}"
            )
        if not isinstance(self.parameters, dict):
            raise ConfigurationError(
                f"client tool {self.name!r}: parameters must be a JSON Schema object, "
                f"got {type(self.parameters).__name__}"
            )

    @property
    def schema(self) -> dict[str, Any]:
        """The tool as models read it (OpenAI function format)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters or EMPTY_PARAMETERS,
            },
        }
