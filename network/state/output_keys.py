"""State keys that agents' typed answers land in, declared when the network is built.

An agent with `output_type=T` and `output_key="k"` stores its validated answer in `k`. When the
state schema does not declare `k`, the network declares it as `T` (with the replace handler: a
key holds the latest answer, even when `T` is a list), so the key holds the typed object in the
run, in routers, and after a thread store's round trip, exactly as if the application had
declared it. Decisions where the issue is silent:

- a key declared as `T`, as a union that has `T` among its members (`T | None`), or as `Any`
  (an explicit choice of an untyped key, which then keeps the answer's JSON form) is accepted;
  any other declared type is a `ConfigurationError` naming the key and both types;
- two agents storing different output types in one undeclared key is a `ConfigurationError`
  naming the key, both agents and both types (no type would fit both), and so is a typed
  agent and an agent without `output_type` (its text) storing in one;
- a closed schema that does not declare the key is a `ConfigurationError` when the network is
  built (a closed schema lists every key; today's alternative is a `StateError` mid-run).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable
from typing import Annotated, Any, Protocol, get_args, get_origin, runtime_checkable

from network.errors import ConfigurationError
from network.state.handlers import replace_values
from network.state.schema import (
    CONVERSATION_NAMES,
    KeySpec,
    StateSchema,
    build_spec,
    conversation_name_message,
    storable_key,
    unstorable_key_message,
)
from network.state.typenames import type_name

__all__ = ["WritesTypedOutput", "declare_output_keys"]


@runtime_checkable
class WritesTypedOutput(Protocol):
    """An agent whose typed answer (`output_type`) is stored in a state key (`output_key`)."""

    name: str
    output_key: str | None
    output_type: Any


def _plain(tp: Any) -> Any:
    """`tp` without `Annotated` constraints (a pydantic state model's fields may carry them)."""
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _fits(declared: Any, produced: Any) -> bool:
    """Whether a key declared as `declared` can hold every value of type `produced`."""
    declared = _plain(declared)
    if declared is Any or declared == produced:
        return True
    if get_origin(declared) in (typing.Union, types.UnionType):
        return any(_fits(member, produced) for member in get_args(declared))
    return False


def declare_output_keys(network: str, schema: StateSchema, agents: Iterable[Any]) -> StateSchema:
    """`schema` with every typed `output_key` it does not declare declared as its agent's
    `output_type` (a new schema; the given one is never changed), or a `ConfigurationError`
    naming the key and both types where a declaration conflicts."""
    wanted: dict[str, tuple[Any, str]] = {}  # key -> (output type, first agent storing it)
    texts: dict[str, str] = {}  # undeclared key -> the first agent storing its text answer there
    for agent in agents:
        if not isinstance(agent, WritesTypedOutput):
            continue
        key, produced = agent.output_key, agent.output_type
        if key in CONVERSATION_NAMES:  # typed or not: refused before the run, naming the agent
            raise ConfigurationError(
                f"network {network!r}: agent {agent.name!r}: output_key: "
                + conversation_name_message(key)
            )
        if key is None:
            continue
        if not storable_key(key):  # refused before the run, not at the write after the model
            raise ConfigurationError(
                f"network {network!r}: agent {agent.name!r}: output_key: "
                + unstorable_key_message(key)
            )
        if produced is None:
            if schema.closed and schema.spec(key) is None:  # else refused after the model call
                raise ConfigurationError(
                    f"network {network!r}: agent {agent.name!r} stores its answer in state key "
                    f"{key!r} (output_key), which the closed state schema does not declare; "
                    "declare it (as str)"
                )
            if schema.spec(key) is None:
                texts.setdefault(key, agent.name)
            continue
        declared = schema.spec(key)
        if declared is not None:
            if not _fits(declared.type, produced):
                raise ConfigurationError(
                    f"network {network!r}: state key {key!r} is declared as "
                    f"{declared.type_label}, but agent {agent.name!r} stores its output_type "
                    f"{type_name(produced)} there (output_key); declare the key as "
                    f"{type_name(produced)} (or {type_name(produced)} | None), or store the "
                    "answer in another key"
                )
            continue
        if schema.closed:
            raise ConfigurationError(
                f"network {network!r}: agent {agent.name!r} stores its output_type "
                f"{type_name(produced)} in state key {key!r} (output_key), which the closed "
                f"state schema does not declare; declare it as {type_name(produced)}"
            )
        earlier = wanted.get(key)
        if earlier is not None and earlier[0] != produced:
            raise ConfigurationError(
                f"network {network!r}: agents {earlier[1]!r} and {agent.name!r} both store "
                f"their answer in state key {key!r} (output_key), as {type_name(earlier[0])} "
                f"and {type_name(produced)}; one key holds one type: declare it in the "
                "state schema, or use two keys"
            )
        wanted.setdefault(key, (produced, agent.name))
    for key, (produced, typed_agent) in wanted.items():
        if key in texts:  # the key is declared as the typed answer's type: text never fits
            raise ConfigurationError(
                f"network {network!r}: agents {typed_agent!r} and {texts[key]!r} both store "
                f"their answer in state key {key!r} (output_key), as {type_name(produced)} "
                f"and text (agent {texts[key]!r} has no output_type); one key holds one type: "
                "declare it in the state schema, or use two keys"
            )
    if not wanted:
        return schema
    specs: dict[str, KeySpec] = {
        key: build_spec(key, produced, replace_values) for key, (produced, _) in wanted.items()
    }
    return schema.with_keys(specs)
