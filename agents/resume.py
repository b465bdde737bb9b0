"""Finishing the tool calls a run stopped on, in the run that answers them (the kernel's side
of `network.run.interrupts`).

`resume_call` runs the accepted calls (through the agent's `wrap_tool` stages, as any call
runs), rejects the others, and returns one result, as if the agent's call ended there. A call
that waits again (a sub-run that stopped on another confirmation) gets no record: `waiting`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Protocol

from agents.tools._dispatch import run_tool_calls
from network.history.messages import ToolCall
from network.history.results import InferenceResult, ToolCallRecord
from network.run.context import AgentLike, RunContext
from network.run.events import ToolResult
from network.run.interrupts import Answer, Interrupt


class ToolAgent(AgentLike, Protocol):
    """An agent with tools of its own (`Agent`), as resuming its held calls needs it."""

    tools: dict[str, Any]

    def tool_wraps(self, ctx: RunContext) -> tuple[Any, ...]: ...


def waiting(ctx: RunContext, records: list[Any]) -> list[Any]:
    """`records` without the calls a sub-run's interrupt holds (they get their result when
    the interrupt is answered)."""
    held = {i.tool_call_id for i in ctx.engine.interrupts if i.nested is not None}
    return [record for record in records if record.id not in held] if held else records


def group_answers(
    answered: list[tuple[Interrupt, Answer]],
) -> Mapping[str, list[tuple[Interrupt, Answer]]]:
    """Answers to sub-runs' interrupts, by the tool call that started each sub-run."""
    groups: dict[str, list[tuple[Interrupt, Answer]]] = {}
    for interrupt, answer in answered:
        if interrupt.nested is not None:
            groups.setdefault(interrupt.tool_call_id, []).append((interrupt, answer))
    return groups


async def resume_call(
    agent: ToolAgent, ctx: RunContext, answered: list[tuple[Interrupt, Answer]]
) -> InferenceResult:
    """Run the accepted calls, reject the others; one result, as if the agent's call ended.

    An interrupt raised inside a sub-run (`agents.capabilities.subagents`) is answered by that
    sub-run,
    accepted or not: its tool call runs again and continues the sub-run with the answers
    (`RunContext.engine.subagent_answers`). If the sub-run stops on another confirmation, the call
    waits again and gets no record here."""
    started_at = time.time()
    started = time.perf_counter()
    subruns = group_answers(answered)
    accepted = _calls_to_run(answered, subruns)
    done: dict[str, ToolCallRecord] = {}
    if accepted:
        ctx.engine.subagent_answers = subruns or None
        try:
            wraps = agent.tool_wraps(ctx)
            ran = await run_tool_calls(ctx, agent, agent.tools, accepted, wraps)
            for record in waiting(ctx, ran):
                done[record.id] = record
        finally:
            ctx.engine.subagent_answers = None
    records: list[ToolCallRecord] = []
    for interrupt, answer in answered:
        if interrupt.nested is not None:  # one record per sub-run, unless it waits again
            record = done.pop(interrupt.tool_call_id, None)
            if record is not None:
                records.append(record)
            continue
        records.append(
            done.get(interrupt.tool_call_id)
            or (_responded(interrupt, answer) if answer.responded else _rejected(interrupt, answer))
        )
    emitter = ctx.engine.emitter
    if emitter.active:
        for record in records:
            await emitter.emit(ToolResult(record.id + ":result", record.id, record.content))
    return InferenceResult(
        agent=agent.name,
        input=ctx.input,
        history=ctx.state.history(),
        tool_calls=records,
        started_at=started_at,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _calls_to_run(
    answered: list[tuple[Interrupt, Answer]],
    subruns: Mapping[str, list[tuple[Interrupt, Answer]]],
) -> list[ToolCall]:
    """The calls a person accepted, then one per sub-run that waited (it runs again to take
    its answers, accepted or not). An edited call runs with the person's arguments, and the
    history records those."""
    accepted = [
        ToolCall(
            id=interrupt.tool_call_id,
            name=interrupt.tool,
            arguments=interrupt.arguments if answer.arguments is None else answer.arguments,
        )
        for interrupt, answer in answered
        if answer.approved and interrupt.nested is None
    ]
    return accepted + [
        ToolCall(id=call_id, name=pairs[0][0].tool, arguments=pairs[0][0].arguments)
        for call_id, pairs in subruns.items()
    ]


def _responded(interrupt: Interrupt, answer: Answer) -> ToolCallRecord:
    """The call answered by a person instead of the tool: their value is its result."""
    value = answer.response
    content = (
        value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    )
    return ToolCallRecord(
        id=interrupt.tool_call_id,
        name=interrupt.tool,
        arguments=interrupt.arguments,
        result=value,
        content=content,
    )


def _rejected(interrupt: Interrupt, answer: Answer) -> ToolCallRecord:
    why = f": {answer.reason}" if answer.reason else ""
    message = f"the user rejected this call to {interrupt.tool!r}{why}. It did not run."
    return ToolCallRecord(
        id=interrupt.tool_call_id,
        name=interrupt.tool,
        arguments=interrupt.arguments,
        content=f"Rejected: {message}",
        is_error=True,
        error=message,
        error_type="rejected",
    )
