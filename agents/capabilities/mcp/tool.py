"""`MCPTool`: one tool of an MCP server, offered to the model like any `@tool`.

It is a `Tool`, so it goes through the same dispatch as local tools (`agents.tools._dispatch`): the
time limit (`MCPServer(timeout=...)`, else the agent's, else the network's `tool_timeout`, else
`DEFAULT_CALL_TIMEOUT`: a server is a stranger, and one that never answers must not hold a run
forever),
state staging, `outputs_to_state`, error results. Its arguments are validated against the
server's `inputSchema` before anything is sent; its result is mapped by
`agents.capabilities.mcp.content`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.capabilities.mcp._arguments import ArgumentsCheck
from agents.capabilities.mcp._progress import progress_relay
from agents.capabilities.mcp.content import error_text, result_size, result_value, utf8_size
from agents.tools._result_text import tool_result_text
from agents.tools.tool import Tool, arguments_object, output_mappings
from agents.tools.tool_context import ToolContext
from network.errors import ToolError

DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds an MCP tool call may take when neither the server's `timeout=` nor the agent's or
the network's `tool_timeout` says otherwise."""


@dataclass(frozen=True, slots=True)
class ListedTool:
    """A tool as its server listed it (the server's own name), with its arguments check."""

    name: str
    description: str
    input_schema: dict[str, Any]
    check: ArgumentsCheck
    annotations: Any = None  # the server's `ToolAnnotations`, if any (read-only hints, ...)


class MCPTool(Tool):
    """A listed MCP tool under the name one agent offers it by.

    Attributes:
        server: the `MCPServer` it belongs to.
        listed: the tool as the server listed it (`listed.name` is the server's name for it).
        name: the name the model calls it by (the server's, or `server__tool` on a clash).
    """

    __slots__ = ("listed", "server")
    # the time limit when no one set one (`agents.tools._dispatch.time_limit`)
    default_timeout: float | None = DEFAULT_CALL_TIMEOUT

    def __init__(
        self,
        server: Any,
        listed: ListedTool,
        name: str,
        *,
        outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> None:
        # Not `Tool.__init__`: there is no Python function to describe; the server's schema
        # is the description. The attributes dispatch reads are set here.
        self.server = server
        self.listed = listed
        self.fn = self.invoke
        self.name = name
        self.description = listed.description
        self.inputs_from_state: dict[str, str] = {}
        self.outputs_to_state = output_mappings(f"tool {name!r}", outputs_to_state)
        self.requires_confirmation = False
        self.private_errors = False  # a server's errors arrive as its text, not exceptions
        self.guardrails = None
        self.timeout = timeout
        self._call_async = True
        self.isolated = False
        self.blocking = False
        self.inline = False
        self.reads_run = True  # never read: a tool that is not inline is given its context
        self._process_target = None
        self._injected = {}
        self._state_inputs = {}
        self._argument_fields = None  # arguments go through `validate` (the server's schema)
        parameters = dict(listed.input_schema)
        parameters.setdefault("type", "object")
        parameters.setdefault("properties", {})
        self.parameters = list(parameters["properties"])
        self.schema = {
            "type": "function",
            "function": {"name": name, "description": listed.description, "parameters": parameters},
        }

    def validate(self, arguments: Any) -> dict[str, Any]:
        """The model's arguments, checked against the server's `inputSchema`."""
        checked = arguments_object(self.name, arguments)
        self.listed.check(checked)
        return checked

    async def invoke(self, arguments: Any, context: ToolContext) -> Any:
        """Validate, call the tool on the run's connection, map its result, write outputs."""
        checked = self.validate(arguments)
        connection = await self.server.connection(context.run)
        relay = progress_relay(context, self.name, connection.name)
        if relay is None:
            result = await connection.call(self.listed.name, checked, self.name)
        else:  # a live sink: the server is asked for progress, which reaches the sink
            result = await relay.during(
                connection.call(self.listed.name, checked, self.name, progress=relay.report)
            )
        # first a bound of what was sent, before anything is built from it
        self._within_limit(result_size(result), connection.name)
        if result.is_error:
            text = error_text(result)
            self._within_limit(utf8_size(text), connection.name)
            raise ToolError(
                f"tool {self.name!r} failed on MCP server {connection.name!r}: {text}",
                tool=self.name,
            )
        value = result_value(result)
        if self.server.max_result_bytes is not None:  # then the very text the model reads
            try:
                shown = tool_result_text(value)
            except Exception:  # no text of it: the dispatch makes that the call's failure
                shown = ""
            self._within_limit(utf8_size(shown), connection.name)
        if self.outputs_to_state:
            self._write_outputs(value, context.state.kv)
        return value

    def _within_limit(self, size: int, server_name: str) -> None:
        """Fail the call, none of its content shown, when `size` bytes of text are over the
        server's `max_result_bytes`."""
        limit = self.server.max_result_bytes
        if limit is not None and size > limit:
            raise ToolError(
                f"tool {self.name!r} failed: MCP server {server_name!r} sent a result "
                f"of {size:,} bytes, over the limit of {limit:,} (max_result_bytes); "
                "none of it is shown",
                tool=self.name,
            )

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r}, server={self.server.name!r})"
