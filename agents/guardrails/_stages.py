"""The guardrail stages of an agent call (`Agent.call`), for agents that have guardrails or
run in a network that has some: an agent with none never comes here.

- `due_checks`: which guardrails this call runs. Input guardrails check the run's input (the
  user's message): the network's at the run's entry call (its first), the agent's at its
  first call of the run; none on a run that continues a stopped one (its input was checked).
  Output guardrails (the agent's, then the network's) check every final answer.
- `checked_call`: the call inside a savepoint of the state: a trip undoes whatever the call
  wrote (a hook's writes included), so nothing of it is committed; its result is never made.
- `answer_checked`: the model call with the input guardrails (`network.run.guardrails`).
- `check_answer`: the output guardrails, before the answer is committed or `output_key`
  written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agents.models._calls import model_calls
from network.errors import GuardrailTripped
from network.history.results import InferenceResult
from network.run.context import AgentLike, RunContext
from network.run.guardrail_checks import check_beside, run_guardrails, tripped_error
from network.run.guardrails import Guardrail, LimitReached, log_of


class GuardedAgent(AgentLike, Protocol):
    """An agent with guardrails, as its stages need it."""

    input_guardrails: tuple[Guardrail, ...]
    output_guardrails: tuple[Guardrail, ...]

    async def call(self, ctx: RunContext, checks: Any = None) -> InferenceResult: ...


@dataclass(slots=True)
class DueChecks:
    """The guardrails one agent call runs."""

    inputs: list[Guardrail]
    outputs: tuple[Guardrail, ...]


def due_checks(agent: GuardedAgent, ctx: RunContext) -> DueChecks:
    """The guardrails due at this call of `agent` (see the module docstring)."""
    defined: Any = ctx.network  # a `Network`'s guardrails (NetworkLike does not say)
    inputs: list[Guardrail] = []
    if not ctx.continues and not ctx.resume:  # a continuation's input was checked already
        log = ctx.guardrails
        if ctx.call_count == 0:
            inputs.extend(getattr(defined, "input_guardrails", ()))
        if agent.input_guardrails and (log is None or agent.name not in log.inputs_checked):
            log_of(ctx).inputs_checked.add(agent.name)
            inputs.extend(agent.input_guardrails)
    outputs = agent.output_guardrails + tuple(getattr(defined, "output_guardrails", ()))
    return DueChecks(inputs, outputs)


async def checked_call(agent: GuardedAgent, ctx: RunContext) -> InferenceResult:
    """`agent.call(ctx)` with its guardrails, inside a savepoint a trip rolls back."""
    checks = due_checks(agent, ctx)
    kv: Any = ctx.state.kv
    mark = kv.savepoint()
    try:
        result = await agent.call(ctx, checks)
    except (GuardrailTripped, LimitReached):
        kv.rollback(mark)  # nothing of the tripped call stays: state, ops, provenance
        raise
    except BaseException:
        kv.release(mark)
        raise
    kv.release(mark)
    return result


async def answer_checked(
    agent: GuardedAgent,
    ctx: RunContext,
    checks: DueChecks,
    ask: Callable[[], Awaitable[tuple[Any, Any, Any]]],
    model: Any,
    asked_at: float,
    requested: float,
) -> tuple[Any, Any, Any]:
    """The model's answer (`ask()`: response, typed answer, call events), once the input
    guardrails due passed (run beside it, or before it for blocking ones); `GuardrailTripped`
    when one tripped. An answer a trip discards was paid for: its usage and requests are
    counted (`GuardrailLog.discarded`)."""

    def discard(answer: tuple[Any, Any, Any]) -> None:
        response, typed, _ = answer
        if typed is not None:
            spent = typed.calls
        elif requested:
            spent = model_calls(model, agent.name, response, asked_at, requested)
        else:
            spent = []
        log_of(ctx).discarded.extend(spent)
        ctx.add_usage(response.usage)

    return await check_beside(ctx, checks.inputs, ctx.input, agent.name, ask, discard)


async def check_answer(agent: GuardedAgent, ctx: RunContext, checks: DueChecks, value: Any) -> None:
    """Run the output guardrails on a final answer; `GuardrailTripped` when one tripped."""
    trip = await run_guardrails(ctx, checks.outputs, value, agent=agent.name)
    if trip is not None:
        raise tripped_error(ctx, *trip, agent=agent.name)
