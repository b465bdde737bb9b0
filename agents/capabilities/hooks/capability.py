"""The hooks capability: `AgentHooks` run at their stages of the agent call.

`on_start` at the request stage (on a prompt of its own: the shared one is read-only), with
the call's prompt and history, which it may replace, or the call skipped; `on_response` at
the answer stage; `on_finish` at the record stage. Each may be sync or async.
"""

from __future__ import annotations

import inspect
from typing import Any

from agents.capabilities.hooks.options import AgentHooks
from network.history.messages import SystemMessage
from network.history.model_io import ModelResponse
from network.history.results import InferenceResult
from network.run.agent_call import AgentCall
from network.run.capability import Capability


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

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        assert self.hooks.on_response is not None
        call.response = response
        await _maybe_await(self.hooks.on_response(call))
        return call.response if call.response is not None else response

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        assert self.hooks.on_finish is not None
        call.result = result
        kept = await _maybe_await(self.hooks.on_finish(call))
        return kept if kept is not None else result

    def __repr__(self) -> str:
        return f"HooksCapability({self.hooks!r})"


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
