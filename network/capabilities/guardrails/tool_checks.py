"""A tool call with guardrails (`@tool(input_guardrails=..., output_guardrails=...)`).

The arguments are checked before the tool runs, the result before the model sees it
(`network.run.guardrails`). Both checks see the arguments as the tool receives them, validated
and coerced by its schema: a check of the model's raw arguments could pass `"800"` that the
tool then runs as 800, or fail on a value the tool would refuse anyway. A call whose arguments
do not validate is run as it is, to fail as the tool's own error (the model reads what is
wrong), with no guardrail asked. A check's `GuardrailResult.reject(message)` makes the call an
error result carrying that message (error type "GuardrailRejected"): the model reads it and
the run goes on; a rejected result's state writes are dropped like a failed call's. A trip
without a message raises `GuardrailTripped`: the run stops, and nothing of the agent call
that made the tool call is committed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from network.history.messages import ToolCall
from network.history.results import ToolCallRecord
from network.run.agent_call import ToolLike
from network.run.context import RunContext
from network.run.guardrail_checks import run_guardrails, tripped_error
from network.run.guardrails import Guardrail, GuardrailResult, ToolCallCheck

REJECTED = "GuardrailRejected"


async def guarded_call(
    ctx: RunContext,
    agent: str,
    checks: tuple[tuple[Guardrail, ...], tuple[Guardrail, ...]],
    tool: ToolLike,
    call: ToolCall,
    run: Callable[[], Awaitable[ToolCallRecord]],
) -> ToolCallRecord:
    """`run()` (the call of `tool` itself) between its guardrails: its record, a rejection's,
    or `GuardrailTripped`."""
    started = time.perf_counter()
    inputs, outputs = checks
    try:
        arguments = tool.validate(call.arguments)
    except Exception:  # the tool refuses them: its own error result, raised by `run()`
        return await run()
    if inputs:
        check = ToolCallCheck(call.name, arguments, call.id, agent)
        trip = await run_guardrails(ctx, inputs, check, agent=agent, call=check)
        if trip is not None:
            return _rejected(ctx, agent, call, *trip, started)
    record = await run()
    if outputs and not record.is_error:
        check = ToolCallCheck(call.name, arguments, call.id, agent, record.result, record.content)
        trip = await run_guardrails(ctx, outputs, check, agent=agent, call=check)
        if trip is not None:
            return _rejected(ctx, agent, call, *trip, started)
    return record


def _rejected(
    ctx: RunContext,
    agent: str,
    call: ToolCall,
    guardrail: Guardrail,
    result: GuardrailResult,
    started: float,
) -> ToolCallRecord:
    if result.message is None:  # a trip, not a rejection: the run stops
        raise tripped_error(ctx, guardrail, result, agent=agent, tool=call.name)
    return ToolCallRecord.failed(call, result.message, REJECTED, started)
