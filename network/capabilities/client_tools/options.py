"""`client_tool(...)`: a tool without a function, run by whoever called the network.

    confirm_booking = client_tool(
        "confirm_booking",
        "Ask the user to confirm the booking in the UI.",
        {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
    )
    agent = Agent("concierge", tools=[find_rooms, confirm_booking], model=...)

    result = await network.run("Book me a room")
    result.stop_reason            # "client_tool" when the model called confirm_booking
    result.pending_tool_calls     # [ToolCall(id, "confirm_booking", {"date": ...})]

See `network.run.client_tools` for what happens to a call. Over AG-UI the client declares such
tools itself (`RunAgentInput.tools`); see docs/agui.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from network.errors import ConfigurationError
from network.run.client_tools import EMPTY_PARAMETERS, ClientTool


def client_tool(
    name: str, description: str = "", parameters: dict[str, Any] | None = None
) -> ClientTool:
    """A tool the model may call that runs outside the network: its call ends the run.

    Args:
        name: the name the model calls it by.
        description: what the model reads about it.
        parameters: the JSON Schema of its arguments (default: no arguments).
    """
    if parameters is not None and not isinstance(parameters, Mapping):
        raise ConfigurationError(
            f"client tool {name!r}: parameters must be a JSON Schema object, "
            f"got {type(parameters).__name__}"
        )
    declared = ClientTool(name, description, dict(parameters or EMPTY_PARAMETERS))
    try:  # the schema goes into every model request that offers the tool: JSON, no NaN
        json.dumps(declared.parameters, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"client tool {name!r}: parameters must be JSON data (no NaN or infinity): {exc}"
        ) from None
    return declared
