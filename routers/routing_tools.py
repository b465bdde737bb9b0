"""The routing agent's two tools, `select_agent` and `done`, and how its answers are read.

The tools are only ever described to the model, never invoked: the router reads the call and
acts on it itself. They are built with `@tool` (for the schema and argument validation) on
first use, so importing `routers` does not pay for building pydantic models.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from agents.tools.tool import tool
from network.errors import ToolError

SELECT_AGENT = "select_agent"
DONE = "done"


def select_agent(
    name: Annotated[str, "the exact name of the agent that should work next"],
    reason: Annotated[str, "why this agent, in one sentence"] = "",
) -> None:
    """Choose the agent that works next."""


def done(summary: Annotated[str, "what was achieved, or why the work stops here"]) -> None:
    """Finish the run: the task is complete, or no agent can take it further."""


@functools.cache
def _tools() -> dict[str, Any]:
    return {SELECT_AGENT: tool(select_agent), DONE: tool(done)}


def tool_schemas(agent_names: list[str]) -> list[dict[str, Any]]:
    """The two tools' schemas; `select_agent.name` is limited to the network's agents.

    The enum lets providers that enforce schemas rule out made-up names; the others still
    read it as the list of valid values.
    """
    tools = _tools()
    select = copy.deepcopy(tools[SELECT_AGENT].schema)
    select["function"]["parameters"]["properties"]["name"]["enum"] = list(agent_names)
    return [select, tools[DONE].schema]


@dataclass(slots=True, frozen=True)
class Choice:
    """A valid answer: an agent's name, or `done` with a summary."""

    agent: str | None = None
    reason: str = ""
    summary: str | None = None


class BadChoice(Exception):
    """An answer the model has to correct; `agent` is the unknown name, if that was the fault."""

    def __init__(self, message: str, agent: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent


def read_call(call: Any, agents: Mapping[str, Any]) -> Choice:
    """The choice a tool call makes, or `BadChoice` saying what the model must fix.

    Names are matched exactly, else case-insensitively when that matches exactly one agent:
    a model writing "Coder" for "coder" is not worth a round trip.
    """
    tools = _tools()
    tool = tools.get(call.name)
    if tool is None:
        raise BadChoice(f"there is no tool {call.name!r}; call `select_agent` or `done`")
    try:
        arguments = tool.validate(call.arguments)
    except ToolError as error:
        raise BadChoice(str(error)) from error
    if call.name == DONE:
        return Choice(summary=arguments["summary"])
    name = arguments["name"]
    if name in agents:
        return Choice(agent=name, reason=arguments["reason"])
    folded = name.strip().casefold()
    matches = [known for known in agents if known.casefold() == folded]
    if len(matches) == 1:
        return Choice(agent=matches[0], reason=arguments["reason"])
    raise BadChoice(
        f"there is no agent named {name!r}. Choose one of: {', '.join(agents)}; "
        "or call `done` if the task is finished",
        agent=name,
    )
