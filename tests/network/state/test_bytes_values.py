"""A typed `bytes` value has a JSON form that round-trips (base64 text), so a run behaves the
same watched or not: with event sinks and streamed (the thread stores, the AG-UI server and
durable runs are in their own packages' `test_bytes_state.py`)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, State, StateValidationError, UnstorableValueError
from network.state.kv import KV
from network.state.schema import StateSchema

RAW = b"\x00\xffab"  # not UTF-8 text
TEXT = base64.urlsafe_b64encode(RAW).decode()  # its JSON form
SCHEMA: dict[str, Any] = {
    "blob": {"type": bytes},
    "blobs": {"type": list[bytes]},
    "named": {"type": dict[str, bytes]},
    "maybe": {"type": bytes | None},
}


@tool
def stash(ctx: ToolContext) -> str:
    """Keep more bytes."""
    ctx.kv.set("blobs", [b"\xfe" + RAW])
    ctx.kv.set("named", {"k": RAW})
    return f"blob has {len(ctx.kv.get('blob'))} bytes"


def network() -> Network:
    def answer(request: Any) -> Any:
        return "kept" if request.history[-1].role == "tool" else call("stash")

    agent = Agent("keeper", tools=[stash], model=ScriptedModel(answer))
    return Network(
        "blobs",
        agents=[agent],
        router=lambda ctx: agent if ctx.call_count < 2 else None,
        state_schema=SCHEMA,
    )


def test_the_json_form_of_bytes_is_base64_and_reads_back() -> None:
    state = State(
        {"blob": RAW, "blobs": [RAW, b""], "named": {"a": RAW}, "maybe": RAW},
        schema=StateSchema(SCHEMA),
    )
    snapshot = state.snapshot()
    assert snapshot == {"blob": TEXT, "blobs": [TEXT, ""], "named": {"a": TEXT}, "maybe": TEXT}
    json.dumps(snapshot)  # text all the way down
    again = State(json.loads(json.dumps(snapshot)), schema=StateSchema(SCHEMA))
    assert again.kv.data == state.kv.data
    assert State.from_json(state.to_json()).kv.data == state.kv.data
    # the standard alphabet reads too; a string that is no base64 is refused, naming the key
    kv = KV(StateSchema(SCHEMA))
    kv.set("blob", base64.b64encode(b"\xfb\xff").decode())
    assert kv.get("blob") == b"\xfb\xff"
    with pytest.raises(StateValidationError, match="'blob'"):
        kv.set("blob", "not base64!")
    assert kv.get("blob") == b"\xfb\xff"


def test_deltas_carry_the_json_form() -> None:
    kv = KV(StateSchema(SCHEMA))
    kv.set("blob", RAW)
    kv.set("blobs", [RAW])
    kv.set("named", {"a": RAW})
    kv.set("blobs", [b""])
    values = [op["value"] for op in kv.take_ops()]
    assert values == [TEXT, [TEXT], {"a": TEXT}, ""]


class Strict(BaseModel):
    data: bytes


class Encoded(BaseModel):
    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    data: bytes


def test_a_models_bytes_follow_its_own_configuration() -> None:
    """pydantic's default form of a model's bytes (UTF-8 text) has none for other bytes: the
    write is refused on the spot, naming the key, instead of breaking the run's stream later."""
    kv = KV(StateSchema({"doc": {"type": Strict}, "docs": {"type": list[Encoded]}}))
    kv.set("doc", Strict(data=b"text"))  # UTF-8 bytes have that form
    with pytest.raises(UnstorableValueError, match="'doc'"):
        kv.set("doc", Strict(data=RAW))
    assert kv.get("doc") == Strict(data=b"text")
    kv.set("docs", [Encoded(data=RAW)])
    again = State(State(kv.data, schema=kv.schema).snapshot(), schema=kv.schema)
    assert again.kv.get("docs") == [Encoded(data=RAW)]


@pytest.mark.anyio
async def test_a_run_with_sinks_ends_as_a_run_without() -> None:
    plain = await network().run("go", state={"blob": RAW})
    events: list[Any] = []
    watched = await network().run("go", state={"blob": RAW}, sinks=[events.append])
    assert watched.output == plain.output == "kept"
    assert watched.state.kv.data == plain.state.kv.data
    assert watched.state.kv.get("blob") == RAW
    assert watched.results[0].tool_calls[0].result == "blob has 4 bytes"
    snapshots = [event.snapshot for event in events if event.type == "STATE_SNAPSHOT"]
    assert snapshots[0] == {"blob": TEXT}
    for event in events:
        event.model_dump_json()  # every event encodes, as a server sends it


@pytest.mark.anyio
async def test_a_streamed_run_ends_as_a_run_without() -> None:
    async with network().stream("go", state={"blob": RAW}) as events:
        seen = [event async for event in events]
    assert seen[-1].type == "RUN_FINISHED"
    deltas = [
        (op.path, op.value) for event in seen if event.type == "STATE_DELTA" for op in event.delta
    ]
    assert ("/named", {"k": TEXT}) in deltas
    for event in seen:
        event.model_dump_json()
