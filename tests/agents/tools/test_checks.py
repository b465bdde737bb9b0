"""A tool that most likely does not do what its author meant warns where it is defined."""

from __future__ import annotations

import warnings

import pytest

from agents import ToolContext, tool
from agents.tools.checks import ToolDefinitionWarning


def test_a_ctx_parameter_without_the_annotation_warns_at_definition() -> None:
    with pytest.warns(
        ToolDefinitionWarning, match="parameter 'ctx' is not annotated `ToolContext`"
    ) as seen:

        @tool
        def lookup(query: str, ctx) -> str:  # type: ignore[no-untyped-def]
            """Look something up."""
            return query

    assert seen[0].filename == __file__  # points at the tool, not at the library
    assert "ctx" in lookup.parameters  # the model would be asked for it


def test_a_tool_without_a_docstring_warns_at_definition() -> None:
    with pytest.warns(ToolDefinitionWarning, match="tool 'bare' has no docstring"):

        @tool
        def bare(x: int) -> int:
            return x


def test_a_documented_tool_with_an_annotated_ctx_is_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @tool
        def fine(query: str, ctx: ToolContext) -> str:
            """Look something up."""
            return query

        @tool(description="Given a description instead.")
        def described(x: int) -> int:
            return x


def test_an_agent_without_a_description_as_a_tool_warns_at_the_as_tool_line() -> None:
    """docs/tools.md: the warning points at the definition; for `agent.as_tool()` that is
    the user's `as_tool` call (its `description=` is the fix), not the library's wrapper."""
    import inspect

    from agents import Agent, ScriptedModel

    helper = Agent("helper", model=ScriptedModel(["hi"]))
    with pytest.warns(ToolDefinitionWarning, match="tool 'helper' has no docstring") as seen:
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        helper.as_tool()
    assert (seen[0].filename, seen[0].lineno) == (__file__, line)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        helper.as_tool(description="Says hi.")


def test_a_tool_definition_warning_is_an_agent_network_warning() -> None:
    # docs/errors.md: "Warnings derive from AgentNetworkWarning"; this one was a bare
    # UserWarning, so `warnings.simplefilter("error", AgentNetworkWarning)` let it through
    from network import AgentNetworkWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", AgentNetworkWarning)
        with pytest.raises(ToolDefinitionWarning, match="tool 'bare' has no docstring"):

            @tool
            def bare(x: int) -> int:
                return x
