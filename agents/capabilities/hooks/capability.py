"""The hooks capability: `AgentHooks` run at their stages of the agent call.

`on_start` at the request stage (on a prompt of its own: the shared one is read-only), with
the call's prompt and history, which it may replace, or the call skipped; `on_response` at
the answer stage; `on_finish` at the record stage. Each may be sync or async.

What a hook leaves is checked as soon as it returns (a `ConfigurationError` naming the agent
and the hook): a prompt or history that is not a list of messages, a response that is not a
`ModelResponse` or whose message no longer validates, an `on_finish` that returns something
other than an `InferenceResult` or None. Unchecked, such a value reached the model client or
the history and failed there with an `AttributeError`, or was kept (an `int` answer stored in
`output_key`).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from agents.capabilities.hooks.options import AgentHooks
from network.errors import ConfigurationError
from network.history.messages import (
    AssistantMessage,
    SystemMessage,
    ToolMessage,
    UserMessage,
    check_messages,
)
from network.history.model_io import ModelResponse
from network.history.results import InferenceResult
from network.run.agent_call import AgentCall
from network.run.capability import Capability

_MESSAGES = (SystemMessage, UserMessage, AssistantMessage, ToolMessage)


class HooksCapability(Capability):
    """Runs an agent's `AgentHooks`; built by `Agent(hooks=...)`."""

    def __init__(self, hooks: AgentHooks) -> None:
        self.hooks = hooks
        # Only the stages with a hook are implemented: a stage without one costs nothing.
        if hooks.on_response is None:
            self.answer = None  # type: ignore[assignment]
        if hooks.on_finish is None:
            self.record = None  # type: ignore[assignment]

    async def request(self, call: AgentCall) -> None:
        # The hooks' view of the call starts on a prompt of its own, not the shared one.
        call.prompt = [SystemMessage(call.text)] if call.text else []
        if self.hooks.on_start is not None:
            await _maybe_await(self.hooks.on_start(call))
            _check_messages(call, "prompt", call.prompt)
            _check_messages(call, "history", call.history)

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        assert self.hooks.on_response is not None
        call.response = response
        await _maybe_await(self.hooks.on_response(call))
        kept = call.response if call.response is not None else response
        if not isinstance(kept, ModelResponse):
            raise _hook_error(call, "on_response", f"left call.response as {_kind(kept)}")
        try:  # the hook may have edited the message in place (its text, its tool calls)
            kept.message = check_messages([kept.message])[0]
        except ValueError as exc:  # pydantic's ValidationError names the field
            problems = "; ".join(  # the fields and why, not the values (a client may read it)
                f"{'.'.join(str(part) for part in error['loc'][2:]) or 'message'}: {error['msg']}"
                for error in getattr(exc, "errors", lambda **_: [])(include_url=False)
            )
            raise _hook_error(
                call, "on_response", f"left call.response.message invalid: {problems or exc}"
            ) from exc
        if not isinstance(kept.message, AssistantMessage):
            raise _hook_error(
                call, "on_response", f"left call.response.message as {_kind(kept.message)}"
            )
        return kept

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        assert self.hooks.on_finish is not None
        call.result = result
        kept = await _maybe_await(self.hooks.on_finish(call))
        if kept is not None and not isinstance(kept, InferenceResult):
            raise _hook_error(
                call,
                "on_finish",
                f"returned {_kind(kept)}; it returns the InferenceResult to keep "
                "(call.result, or dataclasses.replace(call.result, ...)), or None",
            )
        return kept if kept is not None else result

    def __repr__(self) -> str:
        return f"HooksCapability({self.hooks!r})"


def _check_messages(call: AgentCall, field: str, messages: Any) -> None:
    """`on_start` left `call.<field>` a sequence of message objects, or a `ConfigurationError`."""
    if isinstance(messages, str) or not isinstance(messages, Sequence):
        raise _hook_error(
            call, "on_start", f"left call.{field} as {_kind(messages)}; it is a list of messages"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, _MESSAGES):
            raise _hook_error(
                call,
                "on_start",
                f"left {_kind(message)} at call.{field}[{index}]; it is a list of messages "
                "(SystemMessage, UserMessage, AssistantMessage, ToolMessage)",
            )


def _hook_error(call: AgentCall, hook: str, what: str) -> ConfigurationError:
    return ConfigurationError(f"agent {call.agent.name!r}: hook {hook} {what}")


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
