"""What an AG-UI request declares for its run: client tools (`tools`) and `context`.

`RunAgentInput.tools` (CopilotKit frontend actions, human-in-the-loop and tool-based UI) become
`ClientTool`s offered to every agent for that run: the model may call them, the server streams
the call (TOOL_CALL_START / ARGS / END) and ends the run with success; the client runs the tool
and sends the result in the next request (see `network.run.client_tools`). A declared tool
named like one of the network's own tools, or declared twice, is refused (422 `invalid_tool`),
and so is one a model provider would refuse in the run's first request, after the request was
admitted: a name outside `^[a-zA-Z0-9_-]{1,64}$` (the names providers accept, and the rule
`agents.capabilities.mcp` keeps for the names it offers), or parameters holding NaN or
infinity (JSON has no form for them: the model's request would not be JSON).

`RunAgentInput.context` (`[{description, value}]`) is written to the run's `temp:context`
state key as text, one `description: value` line each, so instructions decide where it goes:
`Agent(system="... {temp:context?}")`. A network with a closed schema receives it only if the
schema declares `temp:context`.
"""

from __future__ import annotations

import json
from typing import Any

from network.errors import ConfigurationError
from network.run.client_tools import ClientTool
from network.run.context import NetworkLike
from network.run.tool_names import TOOL_NAME
from network.serving.errors import RequestError

CONTEXT_KEY = "temp:context"


def declared_tools(network: NetworkLike, run_input: Any) -> list[ClientTool]:
    """The request's client tools, or a 422 naming the first one that cannot be offered."""
    own: set[str] = set()
    for agent in network.agents.values():
        offered = getattr(agent, "offered_tool_names", None)  # with its handoffs' tools
        if offered is None:  # an agent of one's own: its tools
            offered = (*getattr(agent, "tools", ()), *getattr(agent, "client_tools", ()))
        own.update(offered)
    out: list[ClientTool] = []
    seen: set[str] = set()
    for declared in run_input.tools or ():
        name = declared.name
        if name in own:
            raise RequestError(
                422,
                "invalid_tool",
                f"client tool {name!r} has the name of a tool of network {network.name!r}",
                key=name,
            )
        if name in seen:
            raise RequestError(422, "invalid_tool", f"client tool {name!r} is declared twice")
        seen.add(name)
        _check_offerable(name, declared.parameters)
        try:
            out.append(ClientTool(name, declared.description or "", declared.parameters or {}))
        except ConfigurationError as exc:
            raise RequestError(422, "invalid_tool", str(exc), key=name) from exc
    return out


def _check_offerable(name: str, parameters: Any) -> None:
    """A 422 naming the tool when a provider would refuse it: its name, or a schema that is
    not JSON (NaN, infinity)."""
    if not TOOL_NAME.fullmatch(name):
        raise RequestError(
            422,
            "invalid_tool",
            f"client tool {name[:80]!r}: a tool name is 1 to 64 letters, digits, '_' or '-' "
            "(what model providers accept)",
            key=name[:80],
        )
    try:
        json.dumps(parameters, allow_nan=False)
    except ValueError as exc:
        raise RequestError(
            422,
            "invalid_tool",
            f"client tool {name!r}: parameters hold NaN or infinity, which JSON cannot carry",
            key=name,
        ) from exc


def context_text(network: NetworkLike, run_input: Any) -> str | None:
    """The request's context as instruction text, or None when there is none to write."""
    entries = run_input.context or ()
    if not entries:
        return None
    schema = network.schema
    if schema.closed and schema.spec(CONTEXT_KEY) is None:
        return None  # documented: a closed schema opts in by declaring the key
    return "\n".join(f"{entry.description}: {entry.value}" for entry in entries)
