"""`tool_choice` on servers that refuse to force a tool call; shared by both clients.

OpenAI, vLLM and most providers honour `tool_choice="required"` (or a named tool). Some
servers refuse it: llama-cpp-python's server answers 500, others 400 or 422. When a request
that forces a tool is refused that way, the client sends it again once with `"auto"` and a
correction message asking for the tool call, and remembers that this server needs it, so later
requests go straight to `"auto"`. The response says so (`ModelResponse.tool_choice_relaxed`),
so a caller that needs a tool call (the routing agent) can insist in its own way.

A refusal is told by what the server says, not by its status alone (`refuses_tool_choice`):
its message must name the field (`tool_choice`, "tool choice"). A 500 that says nothing of it
is a crash, retried like any 5xx, and the model keeps forcing its tools: taking every crash
for a refusal would switch a model that honours `required` to `auto` for good.
"""

from __future__ import annotations

import re

from agents.models._failures import Failure
from agents.models.base import ModelRequest
from network.history.messages import UserMessage

# The statuses a server answers an unsupported `tool_choice` with (llama.cpp: 500).
REFUSAL_STATUS = frozenset({400, 422, 500})
# How a refusal names the field: llama-cpp-python's validation error says `tool_choice`,
# vLLM's "tool choice", others `toolChoice` or `tool-choice`.
_NAMES_THE_FIELD = re.compile(r"tool[_\s-]?choice", re.IGNORECASE)


def forces_a_tool(request: ModelRequest) -> bool:
    """Whether the request makes the model call a tool (`required` or a tool's name)."""
    return bool(request.tools) and request.tool_choice not in (None, "auto", "none")


def refuses_tool_choice(request: ModelRequest, failure: Failure) -> bool:
    """Whether `failure` is the server refusing the forced `tool_choice` the request sent:
    a refusal status whose message names the field (see the module docstring)."""
    return (
        forces_a_tool(request)
        and failure.status in REFUSAL_STATUS
        and _NAMES_THE_FIELD.search(failure.detail) is not None
    )


def relaxed(request: ModelRequest) -> ModelRequest:
    """The same request with `tool_choice="auto"` and a message asking for the tool call."""
    choice = request.tool_choice
    if choice == "required":
        names = ", ".join(f"`{name}`" for name in request.tool_names)
        ask = f"Answer by calling one of the tools ({names}), not with text."
    else:
        ask = f"Answer by calling the tool `{choice}`, not with text."
    return ModelRequest(
        request.system,
        [*request.history, UserMessage(ask)],
        request.tools,
        "auto",
        request.agent,
        request.params,
    )
