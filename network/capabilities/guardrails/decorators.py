"""The decorators that make guardrails of functions and agents (see `agents.guardrails`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from network.capabilities.guardrails.agent_check import AgentGuardrail
from network.errors import ConfigurationError
from network.run.guardrails import Guardrail


def input_guardrail(
    fn: Any = None, *, name: str | None = None, blocking: bool = False, tripped: Any = None
) -> Any:
    """Make an input guardrail of a function `fn(ctx, text)` or of an agent with typed output:
    `@input_guardrail`, `@input_guardrail(blocking=True)`, `input_guardrail(agent)`.

    It checks the run's input (the user's message) at the agent's first call of a run on a
    new message, beside that call's model request, or before it with `blocking=True`.
    """
    make = _maker("input", name, blocking, tripped)
    return make(fn) if fn is not None else make


def output_guardrail(fn: Any = None, *, name: str | None = None, tripped: Any = None) -> Any:
    """Make an output guardrail of `fn(ctx, answer)` or of an agent: it checks the agent's
    final answer (its typed value with `output_type`, else its text) before it is committed
    and before `output_key` is written."""
    make = _maker("output", name, False, tripped)
    return make(fn) if fn is not None else make


def tool_input_guardrail(fn: Any = None, *, name: str | None = None, tripped: Any = None) -> Any:
    """Make a guardrail of a tool call's arguments, `fn(ctx, check: ToolCallCheck)`, run
    before the tool: `@tool(input_guardrails=[...])`. `GuardrailResult.reject(message)`
    refuses the call (the model reads the message); `.trip(info)` stops the run."""
    make = _maker("tool_input", name, False, tripped)
    return make(fn) if fn is not None else make


def tool_output_guardrail(fn: Any = None, *, name: str | None = None, tripped: Any = None) -> Any:
    """Make a guardrail of a tool call's result, `fn(ctx, check: ToolCallCheck)` with
    `check.result` and `check.content`, run before the model sees it:
    `@tool(output_guardrails=[...])`. A rejection replaces the result with its message (and
    drops the call's state writes); a trip stops the run."""
    make = _maker("tool_output", name, False, tripped)
    return make(fn) if fn is not None else make


def _maker(kind: str, name: str | None, blocking: bool, tripped: Any) -> Callable[[Any], Any]:
    def make(fn: Any) -> Guardrail:
        if callable(getattr(fn, "as_guardrail", None)):  # an agent
            return AgentGuardrail(fn, kind=kind, name=name, blocking=blocking, tripped=tripped)
        if tripped is not None:
            raise ConfigurationError(
                f"guardrail {name or getattr(fn, '__name__', fn)!r}: tripped= is for "
                "guardrails made of an agent (a function returns its GuardrailResult)"
            )
        return Guardrail(fn, kind=kind, name=name, blocking=blocking)

    return make
