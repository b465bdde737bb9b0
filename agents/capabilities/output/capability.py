"""The typed output capability: `Agent(output_type=T)` makes the final answer a validated `T`.

At the model stage it shapes the request for the output mode, validates the answer, and
re-asks with the errors until it validates or the budget ends (`OutputValidationError`). In
`output_mode="auto"`, a server that refuses `response_format`
(`agents.models._response_format`) is asked again in tool mode, once, and the model remembers
it for later calls. See `agents.capabilities.output._stream` for the predictive state sent
while the answer streams. When events flow, every answer that does not validate is reported
as a CUSTOM "OutputInvalid" event (agent, attempt, errors, retrying), and each attempt is a
message of its own.

The accepted value is the call's `output` (what output guardrails check and `output_key`
stores, through the key's type, else as JSON) and its record's `output_value`.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING

from agents.capabilities.output._spec import (
    Attempt,
    OutputAttempts,
    OutputInvalid,
    OutputSpec,
    exhausted,
)
from agents.models._response_format import ResponseFormatRefused
from network.history.model_io import ChunkHandler, ModelChunk, ModelRequest, ModelResponse
from network.history.results import InferenceResult, Usage
from network.run.agent_call import NO_OUTPUT, AgentCall
from network.run.capability import Capability, ModelProceed
from network.run.events import OutputInvalid as OutputInvalidEvent
from network.state.scopes import is_persistent

if TYPE_CHECKING:
    from agents.capabilities.output._stream import OutputStream
    from network.run.context import RunContext


class TypedOutput(Capability):
    """Validates an agent's final answer against its `OutputSpec`; built by
    `Agent(output_type=...)`."""

    def __init__(self, spec: OutputSpec, output_key: str | None) -> None:
        self.spec = spec
        self.output_key = output_key

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        spec = self.spec
        mode = await spec.resolve_mode(call.model)
        base = current = _shaped(spec, mode, request)
        stream = self._stream(call.run, mode)
        if stream is not None:
            call.follow_chunks = functools.partial(_following, stream)
        attempts = call.note(OutputAttempts, OutputAttempts).attempts  # shared: validators
        usage = Usage()
        try:
            while True:
                try:
                    response = await proceed(current)
                except ResponseFormatRefused:
                    if spec.mode != "auto" or mode != "native":
                        raise  # the agent asked for native mode itself: say so
                    # the refused request was sent and answered (an HTTP error): a request
                    # of the call's, as a retry is, in any run (the step recorded it failed,
                    # and records the call's next requests: `RunResult.spent` counts both)
                    call.requests = (*call.requests, *call.run.engine.failed_model_calls)
                    # The server takes no response_format: tool mode, same conversation.
                    mode = "tool"
                    base = current = _shaped(spec, mode, request)
                    if stream is not None:
                        stream.mode = mode
                    continue
                usage = usage + response.usage
                message = response.message
                raw = spec.final_answer(mode, message)
                if raw is None:  # it called the agent's tools: not a final answer
                    if stream is not None:
                        await stream.take_back()
                    response.usage = usage
                    return response
                try:
                    value = spec.validate(raw)
                except OutputInvalid as exc:
                    attempts.append(Attempt(raw, exc.errors))
                    await self._rejected(call, attempts)
                    if len(attempts) > spec.retries:
                        why = f"the answer did not match output_type {spec.name}"
                        raise exhausted(spec.agent, attempts, why) from exc
                    if call.events is not None:  # the next attempt is a message of its own
                        call.events = await call.events.renewed(message)
                    if stream is not None:
                        stream.restart()
                    # The feedback replaces the failed attempt: one message more, never more.
                    current = replace(
                        base, history=[*base.history, spec.feedback(mode, attempts[-1])]
                    )
                    continue
                response.usage = usage
                call.output = value
                call.output_json = spec.json_form
                return response
        except Exception:
            if stream is not None:
                await stream.take_back()
            raise

    def _stream(self, ctx: RunContext, mode: str) -> OutputStream | None:
        """The typed output streamed into its state key as it comes, when the run streams
        and the key is one a client sees."""
        key = self.output_key
        if key is None or not ctx.engine.emitter.streaming or not is_persistent(key):
            return None
        from agents.capabilities.output._stream import OutputStream  # noqa: PLC0415 (only runs with a sink need it)

        return OutputStream(ctx, self.spec, key, mode)

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        if call.output is not NO_OUTPUT:
            result.output_value = call.output
        return result

    async def _rejected(self, call: AgentCall, attempts: list[Attempt]) -> None:
        """Re-asks are never silent: consumers see each one (a CUSTOM "OutputInvalid")."""
        emitter = call.run.engine.emitter
        if emitter.active:
            value = {
                "agent": call.agent.name,
                "attempt": len(attempts),
                "errors": attempts[-1].errors,
                "retrying": len(attempts) <= self.spec.retries,
            }
            await emitter.emit(OutputInvalidEvent(value))

    def __repr__(self) -> str:
        return f"TypedOutput({self.spec.name})"


def _shaped(spec: OutputSpec, mode: str, request: ModelRequest) -> ModelRequest:
    """`request` shaped for output mode `mode` (its schema sent as the mode sends it)."""
    system, tools, choice, response_format = spec.shape(
        mode, list(request.system), request.tools, request.tool_choice
    )
    return ModelRequest(
        system, request.history, tools, choice, request.agent, request.params, response_format
    )


def _following(stream: OutputStream, handler: ChunkHandler | None) -> ChunkHandler | None:
    """The chunk handler of a streamed request that also feeds `stream` (none: not streamed)."""
    if handler is None:
        return None

    async def on_chunk(chunk: ModelChunk) -> None:
        await handler(chunk)
        await stream.on_chunk(chunk)

    return on_chunk
