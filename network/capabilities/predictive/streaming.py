"""Predictive state: show a state key's new value while a tool's arguments stream.

The convention is Microsoft Agent Framework's, which CopilotKit frontends read. A network's
`predict_state={"recipe": {"tool": "create_recipe", "tool_argument": "recipe_data"}}` is
announced after RUN_STARTED as CUSTOM "PredictState" (`[{state_key, tool, tool_argument}]`).
While `create_recipe`'s arguments stream, the text so far is parsed as partial JSON
(`pydantic_core.from_json(..., allow_partial="trailing-strings")`) and every new value of
`recipe_data` is sent as a STATE_DELTA `add /recipe` (which applies whether or not the client
has the key). When the tool runs, the final value is committed through the schema
(`network.capabilities.predictive.writes`), and that recorded write reaches the client as an
ordinary STATE_DELTA. A client tool (an AG-UI client's frontend tool) is not run here: its
value is committed when its call is handed to the client (`...predictive.writes.commit_handed`).

The client's copy must end equal to the server's state, so a prediction that is not committed
(the tool failed, its arguments were invalid, the schema refused the value) is taken back:
before the step's recorded changes are sent, the key is reset to the value it had when the
prediction started (pending changes are flushed first, so that value is what the client had).
A call held for confirmation keeps its prediction: it is the proposal the person is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from network.errors import StateError
from network.run.context import RunContext
from network.run.events import PredictState, StateDelta
from network.run.predictive_config import offered_tools
from network.state.scopes import is_persistent, json_pointer

_MISSING: Any = object()


def config_entries(predict_state: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The PredictState announcement's value (the network checked the entries when defined)."""
    entries = []
    for key, spec in predict_state.items():
        entry = {"state_key": key, "tool": spec["tool"]}
        if spec.get("tool_argument") is not None:
            entry["tool_argument"] = spec["tool_argument"]
        entries.append(entry)
    return entries


def parse_partial(text: str) -> Any:
    """The JSON value `text` starts, completed as far as it goes; None when it is not JSON."""
    if not text:
        return None
    try:
        from pydantic_core import from_json  # noqa: PLC0415 (pydantic: predictive state only)

        return from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return None


@dataclass(slots=True)
class _Prediction:
    call_id: str
    baseline: Any  # the key's JSON value when the prediction started, or _MISSING
    value: Any = _MISSING


class Predictor:
    """Turns streaming tool arguments into STATE_DELTAs, and takes back uncommitted ones."""

    def __init__(self, ctx: RunContext, entries: list[dict[str, Any]]) -> None:
        self.ctx = ctx
        self.by_tool: dict[str, list[tuple[str, str | None]]] = {}
        for entry in entries:
            if is_persistent(entry["state_key"]):  # temp: keys never reach a client
                self.by_tool.setdefault(entry["tool"], []).append(
                    (entry["state_key"], entry.get("tool_argument"))
                )
        self.open: dict[str, _Prediction] = {}

    async def on_args(self, call_id: str, name: str, arguments: str) -> None:
        """A tool call's arguments grew: send the predicted keys' new values."""
        targets = self.by_tool.get(name)
        if not targets:
            return
        parsed = parse_partial(arguments)
        if not isinstance(parsed, dict):
            return
        for key, argument in targets:
            if argument is None:
                value = parsed
            elif argument in parsed:
                value = parsed[argument]
            else:
                continue
            prediction = self.open.get(key)
            if prediction is None:
                baseline = await self._baseline(key)
                if baseline is None:
                    continue
                prediction = self.open[key] = _Prediction(call_id, baseline[0])
            elif prediction.call_id == call_id and prediction.value == value:
                continue
            prediction.call_id = call_id
            prediction.value = value
            op = {"op": "add", "path": json_pointer(key), "value": value}
            await self.ctx.engine.emitter.emit(StateDelta([op]))

    async def _baseline(self, key: str) -> tuple[Any] | None:
        """The key's value as the client has it, after sending any pending change."""
        kv: Any = self.ctx.state.kv
        try:
            spec = kv.spec(key)
        except StateError:  # undeclared in a closed schema: the commit will fail, show nothing
            return None
        await self.ctx.engine.emitter.flush_state(kv)
        return (spec.to_json(kv.get(key)) if kv.has(key) else _MISSING,)

    async def settle(self, ctx: RunContext, records: Sequence[Any]) -> None:
        """After a batch of tool calls: reset the keys whose predicted call did not commit."""
        if not self.open:
            return
        kept = {record.id for record in records if not record.is_error}
        kept.update(interrupt.tool_call_id for interrupt in ctx.engine.interrupts)
        kept.update(call.id for call in ctx.engine.pending_tool_calls)  # committed: a client's
        ops = []
        for key, prediction in self.open.items():
            if prediction.call_id in kept:
                continue
            if prediction.baseline is _MISSING:
                ops.append({"op": "remove", "path": json_pointer(key)})
            else:
                ops.append({"op": "add", "path": json_pointer(key), "value": prediction.baseline})
        self.open.clear()
        if ops:
            await ctx.engine.emitter.emit(StateDelta(ops))


async def install(ctx: RunContext) -> Predictor:
    """Announce the network's predictive state and start following tool arguments; the
    predictor, to be told which calls committed (`Predictor.settle`).

    Only the entries whose tool the run offers are announced and followed: an entry naming a
    client tool the run's caller did not declare does nothing in that run."""
    offered = offered_tools(ctx)
    entries = [e for e in config_entries(ctx.network.predict_state) if e["tool"] in offered]
    predictor = Predictor(ctx, entries)
    await ctx.engine.emitter.emit(PredictState(entries))
    ctx.engine.args_listeners = (*ctx.engine.args_listeners, predictor.on_args)
    return predictor
