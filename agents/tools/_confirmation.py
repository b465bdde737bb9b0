"""Tool calls that wait for a person: holding them back, and finishing them on resume.

See `network.run.interrupts` for the whole flow. Here: `hold` takes the calls of one model answer
that need confirmation out of the batch (recording an `Interrupt` for each and showing its
proposed state change), and `resume_call` runs or rejects them once answered.

A call whose arguments are invalid, or whose proposed state the schema rejects, is not held:
nobody should be asked to confirm what cannot run. It goes on with the batch and fails there
before the tool's function is reached, so the model sees the error as usual.
"""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from agents.tools._dispatch import run_tool_calls
from agents.tools._predictive import predicted_values
from agents.tools._subrun import group_answers, held_calls
from agents.tools.tool import Tool
from network.errors import StateError, ToolError
from network.history.messages import ToolCall
from network.history.results import InferenceResult, ToolCallRecord
from network.run.context import AgentLike, RunContext
from network.run.interrupts import Answer, Interrupt


class ToolAgent(AgentLike, Protocol):
    """An agent with tools of its own (`Agent`), as resuming its held calls needs it."""

    tools: dict[str, Tool]


def needs_confirmation(tools: dict[str, Tool], calls: list[ToolCall]) -> bool:
    """Whether any of `calls` is of a `requires_confirmation` tool (cheap: no state copied)."""
    for call in calls:
        tool = tools.get(call.name)
        if tool is not None and tool.requires_confirmation:
            return True
    return False


async def hold(
    ctx: RunContext, agent: AgentLike, tools: dict[str, Tool], calls: list[ToolCall]
) -> list[ToolCall]:
    """Record an interrupt for each call needing confirmation; return the calls to run now."""
    kv: Any = ctx.state.kv
    predict_state = getattr(ctx.network, "predict_state", None) or {}
    checkpoint = ctx.state.snapshot()
    runnable: list[ToolCall] = []
    held: list[Interrupt] = []
    for call in calls:
        tool = tools.get(call.name)
        if tool is None or not tool.requires_confirmation:
            runnable.append(call)
            continue
        try:
            tool.validate(call.arguments)
            proposal = {}
            for key, value in predicted_values(predict_state, call):
                spec = kv.spec(key)
                proposal[key] = spec.to_json(spec.validate(value))
        except (ToolError, StateError):
            runnable.append(call)
            continue
        held.append(
            Interrupt(
                message=f"{agent.name} wants to run {call.name}: confirm or reject.",
                tool_call_id=call.id,
                tool=call.name,
                agent=agent.name,
                arguments=call.arguments,
                proposal=proposal,
                checkpoint=checkpoint,
            )
        )
    if held:
        ctx.interrupts = (*ctx.interrupts, *held)
        emitter = ctx.emitter
        ops = [
            {"op": "add", "path": kv.spec(key).pointer, "value": value}
            for interrupt in held
            for key, value in interrupt.proposal.items()
            if kv.spec(key).persistent
        ]
        if emitter.active and ops:
            from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

            await emitter.emit(events.state_delta(ops))  # the proposal, shown, not applied
    return runnable


async def resume_call(
    agent: ToolAgent, ctx: RunContext, answered: list[tuple[Interrupt, Answer]]
) -> InferenceResult:
    """Run the accepted calls, reject the others; one result, as if the agent's call ended.

    An interrupt raised inside a sub-run (`agents.tools._subrun`) is answered by that sub-run,
    accepted or not: its tool call runs again and continues the sub-run with the answers
    (`RunContext.subagent_answers`). If the sub-run stops on another confirmation, the call
    waits again and gets no record here."""
    started_at = time.time()
    started = time.perf_counter()
    subruns = group_answers(answered)
    # An edited call runs with the person's arguments, and the history records those.
    accepted = [
        ToolCall(
            id=interrupt.tool_call_id,
            name=interrupt.tool,
            arguments=interrupt.arguments if answer.arguments is None else answer.arguments,
        )
        for interrupt, answer in answered
        if answer.approved and interrupt.nested is None
    ]
    accepted += [
        ToolCall(id=call_id, name=pairs[0][0].tool, arguments=pairs[0][0].arguments)
        for call_id, pairs in subruns.items()
    ]
    done: dict[str, ToolCallRecord] = {}
    if accepted:
        ctx.subagent_answers = subruns or None
        try:
            for record in held_calls(ctx, await run_tool_calls(ctx, agent, agent.tools, accepted)):
                done[record.id] = record
        finally:
            ctx.subagent_answers = None
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
    emitter = ctx.emitter
    if emitter.active:
        from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

        for record in records:
            await emitter.emit(events.tool_result(record.id + ":result", record.id, record.content))
    return InferenceResult(
        agent=agent.name,
        input=ctx.input,
        history=ctx.state.history(),
        tool_calls=records,
        started_at=started_at,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _responded(interrupt: Interrupt, answer: Answer) -> ToolCallRecord:
    """The call answered by a person instead of the tool: their value is its result."""
    value = answer.response
    content = value if isinstance(value, str) else json.dumps(value, default=str)
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
