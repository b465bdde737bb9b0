"""`AgentGuardrail`: a guardrail that asks an agent with typed output."""

from __future__ import annotations

import json
import typing
from collections.abc import Callable
from typing import Any, cast

from network.errors import ConfigurationError
from network.history.messages import UserMessage
from network.history.results import ModelCall
from network.run.context import AgentLike, NetworkLike, RunBookkeeping, RunContext
from network.run.guardrails import (
    GuardedRun,
    Guardrail,
    GuardrailResult,
    LimitReached,
    ToolCallCheck,
    log_of,
)
from network.run.limits import Unrecorded
from network.run.stages import run_stages
from network.state.state import State


class AgentGuardrail(Guardrail):
    """A guardrail that asks an agent: one call of it (an inference plus its tools, with its
    typed-output re-asks) on the checked value as the user's message, in a state of its own.

    Its answer is the trip's `info`. `tripped(answer) -> bool` tells whether the tripwire
    fired; without it the answer's `tripped` field does. Its model requests count in the
    run's usage, its `UsageLimits` and its trace, like the agent's own.
    """

    __slots__ = ("agent", "tripped")

    asks_model = True

    def __init__(
        self,
        agent: AgentLike,
        *,
        kind: str,
        name: str | None = None,
        blocking: bool = False,
        tripped: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(self._ask, kind=kind, name=name or agent.name, blocking=blocking)
        if tripped is not None and not callable(tripped):
            raise ConfigurationError(f"guardrail {self.name!r}: tripped= must be a function")
        output_type = getattr(agent, "output_type", None)
        if tripped is None and not _has_tripped_field(output_type):
            raise ConfigurationError(
                f"guardrail {self.name!r}: agent {agent.name!r} must answer with a type that "
                "has a `tripped: bool` field (output_type=...), or give tripped=<function of "
                "its answer>"
            )
        self.agent = agent
        self.tripped = tripped

    async def check(self, run: GuardedRun, value: Any, spent: list[ModelCall]) -> GuardrailResult:
        ctx = cast(RunContext[Any], run)  # a guardrail runs inside an agent call's run
        log = log_of(ctx)
        budget = ctx.engine.budget  # room for this request beside the call it checks (unrecorded)
        asking = Unrecorded(pending=1 + log.in_flight)  # with the other guardrails' under way
        if budget is not None and budget.check(ctx, asking) is not None:
            raise LimitReached
        text = _as_text(value)
        state = State()
        state.append_messages([UserMessage(text)])
        inner: RunContext[Any] = RunContext(
            network=_Unguarded(ctx.network),
            state=state,
            input=text,
            run_id=ctx.run_id,
            thread_id=ctx.thread_id,
            deps=ctx.deps,
            engine=RunBookkeeping(
                resources=ctx.engine.resources,
                record_model_calls=ctx.engine.record_model_calls,
                budget_accounts=ctx.engine.budget_accounts,
                # the run's capabilities for every request (its shared budgets' metering):
                # without them the guard's requests reserved on no budget and counted nowhere
                stages=run_stages([c for c in ctx.engine.stages.capabilities if c.every_request]),
            ),
        )
        inner.agent = self.agent
        log.in_flight += 1
        try:
            result = await self.agent.call(inner)
        finally:
            log.in_flight -= 1
        spent.extend(result.model_calls)
        ctx.add_usage(result.usage)
        answer: Any = result.output_value if result.output_value is not None else result.text
        fired = self.tripped(answer) if self.tripped is not None else answer.tripped
        if type(fired) is not bool:
            raise ConfigurationError(
                f"guardrail {self.name!r}: whether it tripped must be True or False, got {fired!r}"
            )
        return GuardrailResult(fired, answer)

    @staticmethod
    def _ask(run: object, value: Any) -> GuardrailResult:
        raise AssertionError("AgentGuardrail.check runs the agent, never its fn")


class _Unguarded:
    """The network as a guardrail's agent sees it: without the network's guardrails (which
    would check the guardrail's own call, and again, without end)."""

    guarded = False
    input_guardrails: tuple[Guardrail, ...] = ()
    output_guardrails: tuple[Guardrail, ...] = ()

    def __init__(self, network: NetworkLike) -> None:
        self._network = network

    def __getattr__(self, name: str) -> Any:
        return getattr(self._network, name)


def _has_tripped_field(output_type: Any) -> bool:
    if output_type is None:
        return False
    fields = getattr(output_type, "model_fields", None)
    if isinstance(fields, dict):
        return "tripped" in fields
    try:
        return "tripped" in typing.get_type_hints(output_type)
    except Exception:  # not a class with annotations
        return False


def _as_text(value: Any) -> str:
    """The checked value as the guardrail agent's message: text as it is, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, ToolCallCheck):
        shown: dict[str, Any] = {"tool": value.tool, "arguments": value.arguments}
        if value.content is not None:
            shown["result"] = value.content
        # validated arguments may hold models, dates, enums: their JSON form, as a model sends
        from pydantic_core import to_jsonable_python  # noqa: PLC0415 (deferred: import cost)

        return json.dumps(to_jsonable_python(shown, fallback=str), ensure_ascii=False)
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    return json.dumps(value, default=str, ensure_ascii=False)
