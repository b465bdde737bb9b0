"""What a listed tool may bring to the model: an MCP server is a stranger, and its listing goes
into every model request of the agents that use it.

- A description (the tool's `description`, else its `title`) longer than `MAX_DESCRIPTION`
  characters is cut to them, and says how long it was (`... (cut: N characters)`); a warning
  `mcp_description_cut` names the server and the tool. The tool stays usable.
- An `inputSchema` nested deeper than `MAX_SCHEMA_DEPTH` levels, or larger than
  `MAX_SCHEMA_BYTES` as JSON, fails the listing (an `MCPServerError` naming the server and the
  tool): a schema cannot be cut and still say what the tool takes. So does an `outputSchema`
  past the same bounds: the model is not sent it, but the SDK compiles it and checks every
  result of the tool against it (`jsonschema`), so a stranger's schema would cost the client
  its CPU and stack at each call. It is not counted in `MAX_LISTING_BYTES` (what the model is
  sent).
- More than `MAX_TOOLS` tools, or more than `MAX_LISTING_BYTES` of descriptions and schemas
  together (what the model is sent of one server's tools), fail the listing too.

Only the tools `allowed_tools` names are read and counted (a tool left out is never offered),
so a server over a limit can still be used for a few of its tools.
"""

from __future__ import annotations

import json
from typing import Any

from agents.capabilities.mcp.content import utf8_size
from agents.capabilities.mcp.errors import MCPServerError
from network.logger import LazyLogger

_log = LazyLogger("agents.mcp")

MAX_DESCRIPTION = 4_096  # characters of a tool's description the model reads
MAX_SCHEMA_DEPTH = 32  # levels of objects and arrays in one inputSchema or outputSchema
MAX_SCHEMA_BYTES = 65_536  # one inputSchema or outputSchema as JSON
MAX_TOOLS = 1_000  # tools offered of one server
MAX_LISTING_BYTES = 1_000_000  # descriptions and schemas of one server's tools, together
SHOWN_NAME = 100  # characters of a tool's name an error quotes (the server chose it)


def bounded_description(server: str, tool: str, text: str) -> str:
    """`text`, or its first `MAX_DESCRIPTION` characters and how long it was."""
    if len(text) <= MAX_DESCRIPTION:
        return text
    _log.warning("mcp_description_cut", server=server, tool=tool[:SHOWN_NAME], characters=len(text))
    return f"{text[:MAX_DESCRIPTION]}... (cut: {len(text):,} characters)"


def schema_size(server: str, tool: str, schema: dict[str, Any], field: str = "inputSchema") -> int:
    """The bytes of `schema` (the tool's `field`) as JSON, or an `MCPServerError` naming
    `field` when it is nested deeper than `MAX_SCHEMA_DEPTH` or larger than
    `MAX_SCHEMA_BYTES`."""
    depth = _depth(schema)
    if depth > MAX_SCHEMA_DEPTH:
        raise _refused(server, tool, field, f"nested more than {MAX_SCHEMA_DEPTH} levels deep")
    size = utf8_size(json.dumps(schema, ensure_ascii=False, separators=(",", ":")))
    if size > MAX_SCHEMA_BYTES:
        raise _refused(server, tool, field, f"{size:,} bytes as JSON, over {MAX_SCHEMA_BYTES:,}")
    return size


class ListingBudget:
    """What one server's listing has brought so far: tools and bytes, within the limits."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.tools = 0
        self.bytes = 0

    def add(self, description: str, schema_bytes: int) -> None:
        """Count one more tool, or an `MCPServerError` past `MAX_TOOLS` / `MAX_LISTING_BYTES`."""
        self.tools += 1
        self.bytes += utf8_size(description) + schema_bytes
        if self.tools > MAX_TOOLS:
            raise self._over(f"it lists more than {MAX_TOOLS:,} tools")
        if self.bytes > MAX_LISTING_BYTES:
            raise self._over(
                f"its tools' descriptions and schemas take more than {MAX_LISTING_BYTES:,} bytes"
            )

    def _over(self, why: str) -> MCPServerError:
        return MCPServerError(
            f"MCP server {self.server!r}: its tool listing is unusable: {why}; name the tools "
            "to offer with allowed_tools",
            server=self.server,
        )


def _refused(server: str, tool: str, field: str, why: str) -> MCPServerError:
    return MCPServerError(
        f"MCP server {server!r}: tool {tool[:SHOWN_NAME]!r}: its {field} is {why}; leave "
        "the tool out with allowed_tools",
        server=server,
    )


def _depth(value: Any) -> int:
    """How deep `value` nests objects and arrays, counted without recursion and stopping
    past `MAX_SCHEMA_DEPTH` (a stranger's schema may nest further than Python recurses)."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_SCHEMA_DEPTH:
            return deepest
        pending.extend((child, level + 1) for child in children)
    return deepest
