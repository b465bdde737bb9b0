"""Typed output as predictive state: an AG-UI form fills while the model writes its answer.

While an agent with `output_type` and `output_key` streams its final answer, the JSON text so
far is parsed as partial JSON and every new value is sent as a STATE_DELTA `add /<output_key>`
(the convention of `network.capabilities.predictive`, for tool arguments). The validated value is
then
written to the key through its type, and that recorded write reaches the client as an
ordinary STATE_DELTA. An answer that is not committed (it failed validation for good, or the
call raised) is taken back: the key is reset to the value the client had before the
prediction started, so the client's copy always ends equal to the server's state.
"""

from __future__ import annotations

from typing import Any

from agents.capabilities.output._spec import FINAL_OUTPUT_TOOL, OutputSpec
from agents.models.base import ModelChunk, TextDelta, ToolCallDelta
from network.errors import StateError
from network.run.context import RunContext
from network.run.events import StateDelta
from network.state.scopes import is_persistent, json_pointer

_MISSING: Any = object()


class OutputStream:
    """Follows one agent call's streamed answer and predicts its output key."""

    def __init__(self, ctx: RunContext, spec: OutputSpec, key: str, mode: str) -> None:
        self.ctx = ctx
        self.spec = spec
        self.key = key
        self.mode = mode
        self.text = ""
        self.final_index: int | None = None  # tool mode: the final_output call's index
        self.baseline: Any = _MISSING
        self.predicting = False
        self.last: Any = _MISSING

    @staticmethod
    def wanted(ctx: RunContext, key: str | None) -> bool:
        """Whether predictions would reach anyone: a sink reads the answer as it streams
        (not only observers: `Emitter.streaming`) and the key leaves the run."""
        return bool(key) and ctx.engine.emitter.streaming and is_persistent(key or "")

    def restart(self) -> None:
        """A new attempt begins: its text starts empty (the prediction stays open)."""
        self.text = ""
        self.final_index = None

    async def on_chunk(self, chunk: ModelChunk) -> None:
        """Feed one streamed piece; send the predicted value when it changed."""
        if isinstance(chunk, TextDelta):
            if self.mode == "tool":
                return
            self.text += chunk.text
        elif isinstance(chunk, ToolCallDelta):
            if self.mode != "tool":
                return
            if chunk.name == FINAL_OUTPUT_TOOL:
                self.final_index = chunk.index
            if chunk.index != self.final_index or not chunk.arguments:
                return
            self.text += chunk.arguments
        else:  # a reasoning model's thinking predicts nothing
            return
        value = self.spec.partial(self.text)
        if value is None or value == self.last:
            return
        if not self.predicting and not await self._start():
            return
        self.last = value
        op = {"op": "add", "path": json_pointer(self.key), "value": value}
        await self.ctx.engine.emitter.emit(StateDelta([op]))

    async def _start(self) -> bool:
        kv: Any = self.ctx.state.kv
        try:
            spec = kv.spec(self.key)
        except StateError:  # undeclared in a closed schema: the write will fail, show nothing
            return False
        await self.ctx.engine.emitter.flush_state(kv)
        self.baseline = spec.to_json(kv.get(self.key)) if kv.has(self.key) else _MISSING
        self.predicting = True
        return True

    async def take_back(self) -> None:
        """The answer was not committed: reset the key to what the client had before."""
        if not self.predicting:
            return
        self.predicting = False
        pointer = json_pointer(self.key)
        if self.baseline is _MISSING:
            op: dict[str, Any] = {"op": "remove", "path": pointer}
        else:
            op = {"op": "add", "path": pointer, "value": self.baseline}
        await self.ctx.engine.emitter.emit(StateDelta([op]))
