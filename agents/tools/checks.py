"""Warnings at tool definition for mistakes that otherwise only show in the model's behaviour.

- A parameter named `ctx` (or `context`) without a `ToolContext` annotation is not injected:
  it becomes an argument the model is asked to fill, and the tool never sees the run.
- A tool with neither a docstring nor `description=` reaches the model with no description,
  so the model has to guess what it is for.

They are warnings, not errors: both are legal, and a tool may be meant that way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from network.errors import AgentNetworkWarning
from network.warned import warn_at

CONTEXT_NAMES = ("ctx", "context")


class ToolDefinitionWarning(AgentNetworkWarning):
    """A tool definition that is legal but most likely not what its author meant (an
    `AgentNetworkWarning`, as every warning of the library is: one filter covers them all)."""


def warn_about_definition(
    fn: Callable[..., Any], name: str, description: str, model_parameters: Iterable[str]
) -> None:
    """Warn, pointing at the function's definition, about a likely mistake in a tool."""
    for parameter in model_parameters:
        if parameter in CONTEXT_NAMES:
            _warn(
                fn,
                f"tool {name!r}: parameter {parameter!r} is not annotated `ToolContext`, so the "
                f"model is asked to fill it; write `{parameter}: ToolContext` to receive the run",
            )
    if not description:
        _warn(
            fn,
            f"tool {name!r} has no docstring and no description=, so the model is told nothing "
            "about what it does",
        )


def _warn(fn: Callable[..., Any], message: str) -> None:
    """At the function's definition; at the user's line for a function the library wrapped
    (an agent or a network as a tool: the fix is that `as_tool` call's `description=`)."""
    warn_at(fn, message, ToolDefinitionWarning)
