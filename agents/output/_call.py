"""One inference of an agent with `output_type`: shape the request, validate, re-ask.

See `agents.output` for the modes and the re-ask rule. In `output_mode="auto"`, a server that
refuses `response_format` (`agents.models._response_format`) is asked again in tool mode, once,
and the model remembers it for later calls. See `agents.output._stream` for the
predictive state sent while the answer streams. When events flow, every answer that does not
validate is reported as a CUSTOM "OutputInvalid" event (agent, attempt, errors, retrying).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents._call_events import CallEvents
from agents.models._calls import model_calls
from agents.models._response_format import ResponseFormatRefused
from agents.models.base import Model, ModelChunk, ModelRequest, ModelResponse
from agents.output._spec import Attempt, OutputInvalid, OutputSpec
from agents.output._stream import OutputStream
from network import events
from network.errors import OutputValidationError
from network.history.results import ModelCall, Usage
from network.run.context import AgentLike, RunContext


@dataclass(slots=True)
class TypedAnswer:
    """The accepted response (usage summed over attempts) and its validated value."""

    response: ModelResponse
    value: Any
    final: bool  # False: the model called the agent's tools; nothing was validated
    call_events: Any  # the events of the accepted attempt (each attempt has its own)
    attempts: int
    # Each request's records (a re-ask is a request of its own), when the run records them
    # (`RunContext.record_model_calls`: usage limits and traces count every one).
    calls: list[ModelCall] = field(default_factory=list)


class TypedAgent(AgentLike, Protocol):
    """An agent with typed output (`Agent(output_type=...)`), as its model call needs it."""

    output: OutputSpec | None
    output_key: str | None


async def complete_typed(
    agent: TypedAgent, ctx: RunContext, model: Model, request: ModelRequest, call_events: Any
) -> TypedAnswer:
    """Ask `model`, re-asking with the errors until the answer validates or the budget ends."""
    spec = agent.output
    assert spec is not None, "complete_typed is for agents with output_type"
    mode = await spec.resolve_mode(model)
    system, tools, choice, response_format = spec.shape(
        mode, list(request.system), request.tools, request.tool_choice
    )
    base = ModelRequest(
        system, request.history, tools, choice, request.agent, request.params, response_format
    )
    key = agent.output_key
    stream = (
        OutputStream(ctx, spec, key, mode)
        if key is not None and OutputStream.wanted(ctx, key)
        else None
    )
    attempts: list[Attempt] = []
    usage = Usage()
    current = base
    calls: list[ModelCall] = []
    try:
        while True:
            # streamed only when a sink reads it live and the agent did not turn it off
            streams = getattr(agent, "stream", True) and ctx.emitter.streaming
            on_chunk = _chunk_handler(call_events, stream) if streams else None
            asked_at, asked = (
                (time.time(), time.perf_counter()) if ctx.record_model_calls else (0, 0)
            )
            try:
                if ctx.steps is None:
                    response = await model.complete(current, on_chunk)
                else:  # a durable run: each answer is recorded (network.run.steps)
                    response = await ctx.steps.model(
                        agent.name, functools.partial(model.complete, current, on_chunk)
                    )
            except ResponseFormatRefused:
                if spec.mode != "auto" or mode != "native":
                    raise  # the agent asked for native mode itself: say so
                # The server takes no response_format: tool mode, same conversation.
                mode = "tool"
                system, tools, choice, response_format = spec.shape(
                    mode, list(request.system), request.tools, request.tool_choice
                )
                base = current = ModelRequest(
                    system, request.history, tools, choice, request.agent, request.params
                )
                if stream is not None:
                    stream.mode = mode
                continue
            usage = usage + response.usage
            if ctx.record_model_calls:
                calls += model_calls(model, agent.name, response, asked_at, asked)
            message = response.message
            raw = spec.final_answer(mode, message)
            if raw is None:  # it called the agent's tools: not a final answer
                if stream is not None:
                    await stream.take_back()
                response.usage = usage
                return TypedAnswer(response, None, False, call_events, len(attempts) + 1, calls)
            try:
                value = spec.validate(raw)
            except OutputInvalid as exc:
                attempts.append(Attempt(raw, exc.errors))
                if ctx.emitter.active:  # re-asks are never silent: consumers see each one
                    await ctx.emitter.emit(
                        events.custom(
                            "OutputInvalid",
                            {
                                "agent": agent.name,
                                "attempt": len(attempts),
                                "errors": exc.errors,
                                "retrying": len(attempts) <= spec.retries,
                            },
                        )
                    )
                if len(attempts) > spec.retries:
                    raise _exhausted(agent.name, spec, attempts) from exc
                call_events = await _next_events(agent, ctx, message, call_events)
                if stream is not None:
                    stream.restart()
                # The feedback replaces the failed attempt: one message more, never more.
                history = [*base.history, spec.feedback(mode, attempts[-1])]
                current = ModelRequest(
                    base.system, history, tools, choice, request.agent, request.params,
                    response_format,
                )  # fmt: skip
                continue
            response.usage = usage
            return TypedAnswer(response, value, True, call_events, len(attempts) + 1, calls)
    except Exception:
        if stream is not None:
            await stream.take_back()
        raise


def _chunk_handler(call_events: Any, stream: OutputStream | None) -> Any:
    if call_events is None:
        return None
    if stream is None:
        return call_events.on_chunk

    async def on_chunk(chunk: ModelChunk) -> None:
        await call_events.on_chunk(chunk)
        await stream.on_chunk(chunk)

    return on_chunk


async def _next_events(agent: TypedAgent, ctx: RunContext, failed: Any, call_events: Any) -> Any:
    """Close the failed attempt's events; the next attempt reports as a message of its own."""
    if call_events is None:
        return None
    failed.name = agent.name
    failed.id = call_events.message_id
    await call_events.finish(failed)
    return CallEvents(ctx.emitter, agent.name, call_events.listeners)


def _exhausted(agent: str, spec: OutputSpec, attempts: list[Attempt]) -> OutputValidationError:
    last = attempts[-1]
    shown = last.raw if len(last.raw) <= 300 else last.raw[:300] + "..."
    return OutputValidationError(
        f"agent {agent!r}: the answer did not match output_type {spec.name} after "
        f"{len(attempts)} attempt(s); last errors: {'; '.join(last.errors)}; "
        f"last answer: {shown!r}",
        agent=agent,
        attempts=len(attempts),
        errors=[attempt.errors for attempt in attempts],
        raw=last.raw,
    )
