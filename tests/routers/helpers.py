"""Small builders shared by the router tests: agents that answer from a script."""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel


def scripted_agent(name: str, *answers: Any, description: str = "", **kwargs: Any) -> Agent:
    """An agent whose model replays `answers` (the last one again once they run out)."""
    model = ScriptedModel(list(answers) or [f"{name} done"], repeat_last=True)
    return Agent(name, description=description or f"the {name}", model=model, **kwargs)
