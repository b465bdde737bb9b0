"""The ticket the typed-output tests ask an agent for, and the agent that files it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agents import Agent, ScriptedModel


class Ticket(BaseModel):
    title: str
    priority: int
    tags: list[str] = []


TICKET = {"title": "Login fails", "priority": 2, "tags": ["auth"]}


def agent(model: ScriptedModel, **options: Any) -> Agent:
    return Agent("triage", system="File a ticket.", model=model, **options)
