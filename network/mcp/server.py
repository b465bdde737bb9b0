"""`mcp_server(network)`: an MCP server whose one tool runs `network`.

The tool (named after the network, see `run_tool_name`) takes `{"input": str, "state":
{...}}` (`state` optional: the run's initial state, validated by the network's schema) and
returns the run's output as text content and `{"output", "stop_reason", "state"}` as
structured content (`state` is the final state's JSON form, without `temp:` keys). Each call
is a fresh run; calls may run concurrently.

A run that fails, or input the network refuses (a state its schema rejects), is an `isError`
result: the calling agent reads it as a failed tool call. What the client learns follows the
AG-UI server's rule (`network.agui.run_errors`): the library's own errors
(`AgentNetworkError`), written to be read, name the key, tool or agent at fault and are sent
as they are; any other exception (a router's, a store's, a hook's) may hold a connection
string or a token, so the client gets only `internal error (reference err_...)`, and the
server logs the whole exception, traceback included, under that reference for the operator.
The arguments come from outside and are validated before anything runs.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from network.errors import AgentNetworkError
from network.ids import new_id
from network.logger import LazyLogger
from network.network import Network

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult

LOGGER = "network.mcp"
_log = LazyLogger(LOGGER)  # structlog loads on first use, not on import

MAX_INPUT_CHARS = 1_000_000  # a bound on one call's input text, against hostile clients


class RunArguments(BaseModel):
    """The arguments of the run tool, as a client sends them."""

    model_config = ConfigDict(extra="forbid")

    input: str = Field(description="The request for the team.", max_length=MAX_INPUT_CHARS)
    state: dict[str, Any] | None = Field(
        default=None, description="Initial state of the run (keys of the network's state)."
    )


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "output": {"type": ["string", "null"], "description": "The run's final text."},
        "stop_reason": {"type": "string", "description": "Why the run stopped."},
        "state": {"type": "object", "description": "The run's final state (JSON form)."},
    },
    "required": ["output", "stop_reason", "state"],
}


def run_tool_name(network: Network[Any]) -> str:
    """The tool's name: the network's name, with anything but letters, digits, `_` and `-`
    replaced by `_` (the characters MCP clients and model providers accept)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", network.name)[:64]
    return name or "run_network"


def mcp_server(
    network: Network[Any], *, tool_name: str | None = None, description: str | None = None
) -> Server[Any]:
    """An MCP server (the SDK's `mcp.server.lowlevel.Server`) whose one tool runs `network`.

    Args:
        network: the network each tool call runs.
        tool_name: the tool's name (default: `run_tool_name(network)`).
        description: what the calling model reads about the tool (default: the network's
            name and its agents' descriptions).
    """
    import mcp.types as types  # noqa: PLC0415 (mcp: only serving a network loads it)
    from mcp.server.lowlevel import Server  # noqa: PLC0415 (mcp)

    name = tool_name or run_tool_name(network)
    tool = types.Tool(
        name=name,
        description=description or _description(network),
        input_schema=RunArguments.model_json_schema(),
        output_schema=OUTPUT_SCHEMA,
    )

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != name:
            return _error(f"unknown tool {params.name!r} (this server has {name!r})")
        try:
            arguments = RunArguments.model_validate(params.arguments or {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
            return _error(f"invalid arguments: {problems}")
        try:
            result = await network.run(arguments.input, state=arguments.state)
        except Exception as exc:  # the caller reads what it may; the server goes on
            return _error(f"run of network {network.name!r} failed: {_told(network, exc)}")
        structured = {
            "output": result.output,
            "stop_reason": str(result.stop_reason),
            "state": result.state.snapshot(),
        }
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.output or "")],
            structured_content=structured,
        )

    return Server(network.name, on_list_tools=list_tools, on_call_tool=call_tool)


def _description(network: Network[Any]) -> str:
    agents = "; ".join(
        f"{agent.name}: {agent.description}" if agent.description else agent.name
        for agent in network.agents.values()
    )
    return (
        f"Runs the agent network {network.name!r} on `input` and returns its output and final "
        f"state. Agents: {agents}."
    )


def _told(network: Network[Any], error: Exception) -> str:
    """What the client may read of a failed run (see the module docstring)."""
    if isinstance(error, AgentNetworkError):
        _log.warning("mcp_run_failed", network=network.name, error=type(error).__name__)
        return f"{type(error).__name__}: {error}"
    import structlog  # noqa: PLC0415 (structlog: kept out of imports)

    reference = new_id("err_")
    if structlog.is_configured():
        _log.error("mcp_run_failed", network=network.name, reference=reference, exc_info=error)
    else:  # stdlib logging: its handlers format the traceback themselves
        logging.getLogger(LOGGER).error(
            "mcp_run_failed network=%s reference=%s", network.name, reference, exc_info=error
        )
    return f"internal error (reference {reference}); the server's log has the details"


def _error(message: str) -> CallToolResult:
    """An `isError` result: the caller's model reads `message` as the tool's failure."""
    from mcp.types import CallToolResult, TextContent  # noqa: PLC0415 (mcp)

    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
