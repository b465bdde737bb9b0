"""Guardrails for agents and tools: functions or agents whose tripwire stops a run.

    @input_guardrail
    def on_topic(ctx, text: str) -> GuardrailResult:
        return GuardrailResult.trip("off topic") if "homework" in text else GuardrailResult.allow()

    Agent("triage", input_guardrails=[on_topic], output_guardrails=[no_secrets], ...)
    Network("support", ..., input_guardrails=[relevance_agent])  # every entry agent's input

A guardrail is a function `fn(ctx, value)` (sync or async) returning a `GuardrailResult`, or
an `Agent` with `output_type` whose answer says whether the tripwire fired: a type with a
`tripped: bool` field, or any type with `tripped=` telling it from the answer. Where each kind
runs, and what a trip does, is in `network.capabilities.guardrails.capability` and
docs/guardrails.md. Import the names from `agents`.
"""

from network.capabilities.guardrails.agent_check import AgentGuardrail
from network.capabilities.guardrails.capability import Guardrails
from network.capabilities.guardrails.decorators import (
    input_guardrail,
    output_guardrail,
    tool_input_guardrail,
    tool_output_guardrail,
)
from network.errors import GuardrailTripped
from network.run.guardrails import Guardrail, GuardrailResult, ToolCallCheck

__all__ = [
    "AgentGuardrail",
    "Guardrail",
    "GuardrailResult",
    "GuardrailTripped",
    "Guardrails",
    "ToolCallCheck",
    "input_guardrail",
    "output_guardrail",
    "tool_input_guardrail",
    "tool_output_guardrail",
]
