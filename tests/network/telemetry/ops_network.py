"""A network whose run has parallel tool calls, a failing tool, a confirmation and a router."""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, RunContext
from network.telemetry import Telemetry

SECRET = "s3cr3t-temp-value"


@tool
def lookup(city: str, ctx: ToolContext) -> str:
    """Look a city up."""
    ctx.kv.set("seen", [city])
    return f"{city}: sunny"


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"boom because {reason}")


@tool(requires_confirmation=True)
def deploy(target: str) -> str:
    """Deploy, once a person agreed."""
    return f"deployed to {target}"


def script() -> list[Any]:
    return [
        [
            call("lookup", city="Paris"),
            call("lookup", city="Oslo"),
            call("explode", reason="testing"),
        ],
        call("deploy", target="production"),
        "All done: deployed to production.",
    ]


def build(telemetry: Telemetry, model: ScriptedModel | None = None) -> Network:
    ops = Agent(
        "ops",
        description="Runs operations.",
        system="You run operations. Token: {temp:token?}",
        tools=[lookup, explode, deploy],
        model=model or ScriptedModel(script(), name="scripted-ops"),
    )

    def again(ctx: RunContext) -> Any:
        last = ctx.last_result
        return ops if last is None or last.tool_calls else None

    return Network(
        "ops-net",
        agents=[ops],
        router=again,
        state_schema={"seen": {"type": list[str]}, "temp:token": {"type": str}},
        telemetry=telemetry,
    )
