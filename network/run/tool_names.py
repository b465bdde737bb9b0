"""The one rule for a tool name the library is given: what model providers accept.

OpenAI-compatible servers, Anthropic and the others refuse a function name outside
`^[A-Za-z0-9_-]{1,64}$` with a 400 at the run's first request (after the model call was paid
for, or the run was admitted). A name a user gives (`@tool(name=...)`, `agent.as_tool(name=...)`,
`network.as_tool(name=...)`, `handoff(tool_name=...)`, an AG-UI client's declared tool) is
checked against it where it is given, and so is an agent's or network's own name when
`as_tool()` takes it for the tool's; names the library makes are made safe instead
(`handoff_tool_name`, MCP tools' prefixes).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from network.errors import ConfigurationError

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # the tool names model providers accept
_SHOWN = 80  # the most of a refused name an error repeats
_REFUSED = re.compile(r"[^A-Za-z0-9_-]+")  # a run of what providers refuse in a name


def check_tool_name(owner: str, name: Any) -> str:
    """`name` when providers accept it as a tool name; else a `ConfigurationError` naming
    `owner` (`"tool 'x': name"`, `"agent 'a': as_tool name"`)."""
    if isinstance(name, str) and TOOL_NAME.fullmatch(name):
        return name
    shown = name[:_SHOWN] + "..." if isinstance(name, str) and len(name) > _SHOWN else name
    raise ConfigurationError(
        f"{owner} {shown!r} must be 1 to 64 letters, digits, '_' or '-' (the tool names "
        "model providers accept)"
    )


def made_safe(text: str) -> str:
    """`text` as providers take a name: accents dropped, not the letters under them ("Équipe"
    is "Equipe", not "_quipe"), each run of other refused characters one `_`, no `_` at
    either end; "" when nothing is left. Not cut to length: the caller adds its prefix first."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _REFUSED.sub("_", plain).strip("_")


def default_tool_name(owner: str, given: Any, own_name: str) -> str:
    """The name of `owner`'s tool (`agent.as_tool()`, `network.as_tool()`): `given`, else
    `own_name` (an agent's or network's name, which may be any string), checked as a tool
    name; a `ConfigurationError` naming `owner` says to give `name=` when its own is refused."""
    if given is not None:
        return check_tool_name(f"{owner}: as_tool name", given)
    if isinstance(own_name, str) and TOOL_NAME.fullmatch(own_name):
        return own_name
    raise ConfigurationError(
        f"{owner}: its name is not a tool name model providers accept (1 to 64 letters, "
        "digits, '_' or '-'), so it cannot name its tool: give as_tool(name=...)"
    )


__all__ = ["TOOL_NAME", "check_tool_name", "default_tool_name", "made_safe"]
