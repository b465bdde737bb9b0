"""The state writes of a recorded tool call, made again when its result comes from the
recording (`tools="recorded"`), so that the state after the call is the recorded one.

A recorded call keeps its state delta (`state_delta`: RFC 6902 operations, one per write or
per appended item / merged entry) and who made each write (`writes`: key, source, tool call),
in the same order. The operations of a key are the tool call's when only that call wrote the
key in the agent call, or, when several parties did, matched one to one with the key's writes
when there are as many of each; otherwise all of them go to the first tool call that wrote it
(an approximation the replay's report does not hide: the state then shows in later requests).
A call that was not committed to a thread has no `writes`: its tools' writes cannot be told
apart, and are not made again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from network.capabilities.replay.recording import pointer_parts
from network.history.results import InferenceResult
from network.state.handlers import merge_dicts, merge_lists, replace_values


def tool_operations(result: InferenceResult) -> dict[str, list[dict[str, Any]]]:
    """The recorded operations of each tool call of `result`, by tool call id."""
    ops_by_key: dict[str, list[dict[str, Any]]] = {}
    for op in result.state_delta:
        parts = pointer_parts(op.get("path", ""))
        if parts:
            ops_by_key.setdefault(parts[0], []).append(op)
    writers_by_key: dict[str, list[tuple[str, str | None]]] = {}
    for write in result.writes:
        writers_by_key.setdefault(write.key, []).append((write.source, write.tool_call_id))
    found: dict[str, list[dict[str, Any]]] = {}
    for key, ops in ops_by_key.items():
        writers = writers_by_key.get(key, [])
        tools = [call_id for source, call_id in writers if source == "tool" and call_id]
        if not tools:
            continue
        if len(writers) == len(ops):  # one operation per write: matched in order
            for (source, call_id), op in zip(writers, ops, strict=True):
                if source == "tool" and call_id:
                    found.setdefault(call_id, []).append(op)
        else:  # several operations per write (appended items, merged entries)
            found.setdefault(tools[0], []).extend(ops)
    return found


def apply_operations(kv: Any, ops: list[dict[str, Any]]) -> None:
    """Make the recorded operations again on `kv`, through its schema, as the writes the
    store records them for: a whole key's value, an appended item, a merged entry, a removal."""
    for op in ops:
        parts = pointer_parts(op.get("path", ""))
        if not parts:
            continue
        key, value = parts[0], op.get("value")
        if op.get("op") == "remove" and len(parts) == 1:
            kv.delete(key)
        elif len(parts) == 1:
            kv.set(key, value, replace_values)
        elif len(parts) == 2 and parts[1] == "-":
            kv.set(key, [value], merge_lists)
        elif len(parts) == 2 and isinstance(kv.get(key), Mapping):
            kv.set(key, {parts[1]: value}, merge_dicts)
        else:  # a deeper path than the store writes: patched into the key's value
            import jsonpatch  # noqa: PLC0415 (only such an operation needs it)

            whole = {key: kv.get(key)}
            patched = jsonpatch.apply_patch(whole, [op])
            kv.set(key, patched[key], replace_values)
