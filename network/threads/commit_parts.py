"""What a thread commit carries besides the calls: who wrote what, with the calls being committed;
which thread keys a delta touched; and their values as the JSON a store keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.errors import ThreadError
from network.history.results import InferenceResult
from network.history.writes import StateWrite
from network.state.provenance import WriteRecord
from network.state.scopes import scope_of
from network.threads.thread_data import encode_value


def record_writes(
    results: Sequence[InferenceResult], first: int, writes: list[WriteRecord], run_id: str | None
) -> None:
    """Store who wrote what with the calls being committed (`InferenceResult.writes`).

    A write goes with the call it was made in (its writer's run-relative `call_index`); the
    caller's and the router's writes before a call went into that call's delta, and go with it.
    `temp:` keys are never stored.
    """
    by_call: dict[int, list[StateWrite]] = {}
    last = first + len(results) - 1
    for record in writes:
        if scope_of(record.key) == "temp":
            continue
        writer = record.writer
        index = writer.call_index
        if index is None or not first <= index <= last:
            index = first if index is None or index < first else last
        by_call.setdefault(index, []).append(
            StateWrite(
                record.key,
                record.op,
                record.at,
                writer.source,
                writer.tool,
                writer.tool_call_id,
                run_id,
                writer.branch,
            )
        )
    for index, entries in by_call.items():
        result = results[index - first]
        result.writes = (*result.writes, *entries)


def thread_keys(ops: list[dict[str, Any]]) -> list[str]:
    """The thread-scope keys a list of RFC 6902 operations touches, in first-touch order."""
    keys: dict[str, None] = {}
    for op in ops:
        name = op["path"][1:].split("/", 1)[0].replace("~1", "/").replace("~0", "~")
        if scope_of(name) == "thread":
            keys[name] = None
    return list(keys)


def encode_key(key: str, value: Any) -> str:
    try:
        return encode_value(value)
    except Exception as exc:  # pydantic_core's serialization error names the type
        raise ThreadError(
            f"state key {key!r} holds a value that cannot be stored as JSON: {exc}"
        ) from exc
