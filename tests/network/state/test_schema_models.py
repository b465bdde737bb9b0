"""What the README promises about pydantic-model schemas: validators run, None means unset."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationInfo, field_validator, model_validator

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network, State, StateValidationError


class Ticket(BaseModel):
    title: str = ""
    priority: int = 0
    tags: list[str] = []
    plan: str | None = None

    @field_validator("title")
    @classmethod
    def stripped_and_polite(cls, value: str) -> str:
        if "idiot" in value:
            raise ValueError("be polite")
        return value.strip()

    @field_validator("priority", mode="before")
    @classmethod
    def from_words(cls, value: object, info: ValidationInfo) -> object:
        return {"low": 1, "high": 3}.get(value, value) if isinstance(value, str) else value

    @field_validator("tags")
    @classmethod
    def lower(cls, value: list[str]) -> list[str]:
        return [tag.lower() for tag in value]


def test_field_validators_run_on_every_write_of_their_key() -> None:
    kv = State(schema=Ticket).kv
    kv.set("title", "  Printer on fire  ")
    assert kv.get("title") == "Printer on fire"
    kv.set("priority", "high")
    assert kv.get("priority") == 3
    kv.set("tags", ["Ops"])
    assert kv.get("tags") == ["ops"]


def test_a_field_validator_that_rejects_leaves_the_state_as_it_was() -> None:
    kv = State(schema=Ticket).kv
    kv.set("title", "fine")
    with pytest.raises(StateValidationError, match="state key 'title'.*be polite"):
        kv.set("title", "you idiot")
    assert kv.get("title") == "fine"


def test_a_model_with_model_validators_is_refused_with_a_clear_error() -> None:
    class Window(BaseModel):
        start: int = 0
        end: int = 0

        @model_validator(mode="after")
        def ordered(self) -> Window:
            if self.end < self.start:
                raise ValueError("end before start")
            return self

    with pytest.raises(ConfigurationError, match=r"Window: its model validators \(ordered\)"):
        State(schema=Window)


def test_kv_has_is_false_for_a_key_whose_default_is_none_until_written() -> None:
    kv = State(schema=Ticket).kv
    assert not kv.has("plan") and kv.get("plan") is None
    assert kv.has("title")  # a non-None default is a value
    kv.set("plan", "1. reproduce")
    assert kv.has("plan")


@pytest.mark.anyio
async def test_the_readme_has_plan_router_works_with_a_none_default() -> None:
    planner = Agent("planner", model=ScriptedModel(["1. fix it"]), output_key="plan")

    def route(ctx):  # type: ignore[no-untyped-def]
        return None if ctx.kv.has("plan") else planner

    result = await Network("n", agents=[planner], router=route, state_schema=Ticket).run("go")
    assert result["plan"] == "1. fix it" and len(result.results) == 1
