"""Output validators: `Agent(output_validators=[fn, ...])` checks each final answer against the
run (its state, its deps) and sends the model back with a reason when it is wrong.

    def seat_is_free(ctx: RunContext, seat: Seat) -> Seat:
        if seat.row in ctx.deps.taken_rows:
            raise Retry(f"row {seat.row} is taken; pick another")
        return seat

A validator is `fn(value)` or `fn(ctx, value)` (sync or async), where `ctx` is the run's
`RunContext` (`ctx.kv`, `ctx.deps`, `ctx.state`, `ctx.input`) and `value` the final answer: the
typed value of an `output_type` agent (after it validated), else the answer's text. It returns
the value to keep (None keeps it as it is), or raises `network.Retry(reason)`: the model is
asked again with its answer and the reason (one message replacing the rejected answer, as a
typed output's re-ask does), within the agent's `output_retries`, the budget a typed answer's
schema errors take from too. When it is spent, `OutputValidationError` names the agent, every
attempt's reasons and the last answer. Validators run in order; the first `Retry` wins. Any
other exception a validator raises fails the call as it is (the model never sees it).

A rejected answer is never the call's output: output guardrails, `output_key` and the record
see only the answer that passed (the rejected one is not in the history either). Each
rejection is reported as a CUSTOM "OutputInvalid" event (agent, attempt, errors, retrying),
as a typed answer's schema errors are.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agents.capabilities.output._spec import Attempt, OutputAttempts, OutputSpec, exhausted
from network.errors import ConfigurationError, Retry
from network.history.messages import UserMessage
from network.history.model_io import ModelRequest, ModelResponse
from network.history.results import Usage
from network.numbers import check_number
from network.run.agent_call import NO_OUTPUT, AgentCall
from network.run.capability import Capability, ModelProceed
from network.run.context import RunContext
from network.run.events import OutputInvalid as OutputInvalidEvent

OutputValidator = Callable[..., Any]
"""`fn(value)` or `fn(ctx, value)`, sync or async: returns the value to keep (None: as it is),
or raises `Retry(reason)`."""

_MAX_QUOTED = 2000  # the most of a rejected answer quoted back to the model


class ValidatedOutput(Capability):
    """Runs an agent's output validators on each final answer and re-asks on a `Retry`;
    built by `Agent(output_validators=...)`. It wraps the model stage outside a typed output
    (`TypedOutput`), so it sees the value once it has validated against its type."""

    def __init__(
        self,
        agent: str,
        validators: Sequence[OutputValidator],
        retries: int,
        spec: OutputSpec | None = None,
    ) -> None:
        check_number(f"agent {agent!r}: output_retries", retries, integer=True, minimum=0)
        self.agent = agent
        self.retries = retries
        kept = _kept_as(agent, spec)
        self.validators = tuple(_checked(agent, fn, kept) for fn in validators)

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        current = request
        usage = Usage()
        while True:
            response = await proceed(current)
            usage = usage + response.usage
            response.usage = usage
            value = call.output
            if value is NO_OUTPUT:  # a text answer, unless it asked for tools
                if response.message.tool_calls or not response.message.content:
                    return response
                value = response.message.content
            try:
                for check in self.validators:
                    value = await check(call.run, value)
            except Retry as retry:
                raw = _raw(call, response, value)
                failed = call.note(OutputAttempts, OutputAttempts)
                failed.attempts.append(Attempt(raw, [retry.message]))
                await self._rejected(call, failed)
                if len(failed.attempts) > self.retries:
                    raise exhausted(
                        self.agent,
                        failed.attempts,
                        "an output validator rejected the answer",
                        note=f" (output_retries={self.retries})",
                        errors="last reason",
                    ) from retry
                call.output = NO_OUTPUT  # never the call's output, never stored
                if call.events is not None:  # the next attempt is a message of its own
                    call.events = await call.events.renewed(response.message)
                current = _again(request, raw, retry.message)
                continue
            call.output = value
            return response

    async def _rejected(self, call: AgentCall, failed: OutputAttempts) -> None:
        """Re-asks are never silent: consumers see each one (a CUSTOM "OutputInvalid")."""
        emitter = call.run.engine.emitter
        if emitter.active:
            value = {
                "agent": self.agent,
                "attempt": len(failed.attempts),
                "errors": failed.attempts[-1].errors,
                "retrying": len(failed.attempts) <= self.retries,
            }
            await emitter.emit(OutputInvalidEvent(value))

    def __repr__(self) -> str:
        return f"ValidatedOutput({self.agent!r}, {len(self.validators)} validator(s))"


def _kept_as(agent: str, spec: OutputSpec | None) -> Callable[[str, Any], Any]:
    """What checks a value a validator returned, `(validator's name, value) -> value`: the
    agent's `output_type` validates it (a dict may become the model), an agent without one
    keeps text; anything else is a `ConfigurationError` naming the validator, rather than a
    value of the wrong type in the call's output and a state error at its `output_key`."""
    if spec is None:

        def text(name: str, value: Any) -> Any:
            if not isinstance(value, str):
                raise ConfigurationError(
                    f"agent {agent!r}: output validator {name} returned "
                    f"{type(value).__name__}; an agent without output_type answers text: "
                    "return the text to keep, or None to keep it as it is"
                )
            return value

        return text

    def typed(name: str, value: Any) -> Any:
        try:
            return spec.adapter.validate_python(value)
        except sys.modules["pydantic_core"].ValidationError as exc:  # loaded with the adapter
            raise ConfigurationError(
                f"agent {agent!r}: output validator {name} returned {type(value).__name__}, "
                f"which is not its output_type {spec.name}: "
                f"{exc.error_count()} error(s), first: {exc.errors()[0]['msg']}"
            ) from exc

    return typed


def _checked(
    agent: str, fn: Any, kept_as: Callable[[str, Any], Any]
) -> Callable[[RunContext, Any], Awaitable[Any]]:
    """`fn` as `async (ctx, value) -> value`; a validator of another shape is refused."""
    if not callable(fn):
        raise ConfigurationError(
            f"agent {agent!r}: output validator {fn!r} is not callable; give fn(value) or "
            "fn(ctx, value)"
        )
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
    except (TypeError, ValueError):  # a builtin without a signature: called with the value
        params = [None]  # type: ignore[list-item]
    if len(params) not in (1, 2):
        name = getattr(fn, "__name__", repr(fn))
        raise ConfigurationError(
            f"agent {agent!r}: output validator {name} takes {len(params)} required "
            "arguments; give fn(value) or fn(ctx, value)"
        )
    with_ctx = len(params) == 2
    name = getattr(fn, "__name__", repr(fn))

    async def check(ctx: RunContext, value: Any) -> Any:
        kept = fn(ctx, value) if with_ctx else fn(value)
        if inspect.isawaitable(kept):
            kept = await kept
        return value if kept is None or kept is value else kept_as(name, kept)

    return check


def _raw(call: AgentCall, response: ModelResponse, value: Any) -> str:
    """The rejected answer as the model gave it (a typed answer's JSON when it had no text)."""
    text = response.message.content
    if text:
        return text
    dump = call.output_json
    try:
        return json.dumps(dump(value) if dump is not None else value)
    except (TypeError, ValueError):
        return repr(value)


def _again(request: ModelRequest, raw: str, reason: str) -> ModelRequest:
    """`request` with one user message more: the rejected answer quoted, and why."""
    quoted = raw if len(raw) <= _MAX_QUOTED else raw[:_MAX_QUOTED] + "..."
    feedback = UserMessage(
        f"Your previous answer was not accepted.\nYour answer was:\n{quoted}\n"
        f"Reason: {reason}\nAnswer again, fixing that."
    )
    return ModelRequest(
        request.system, [*request.history, feedback], request.tools, request.tool_choice,
        request.agent, request.params, request.response_format,
    )  # fmt: skip


__all__ = ["OutputValidator", "ValidatedOutput"]
