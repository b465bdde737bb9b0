"""A one-agent team for the tests that only need some agent with a tool."""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, tool


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def solo(*answers: Any) -> Agent:
    """An agent named `solo` with the `lookup` tool that gives `answers` in turn."""
    return Agent("solo", tools=[lookup], model=ScriptedModel(list(answers)))
