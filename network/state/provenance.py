"""Who wrote a state key, and when."""

from __future__ import annotations

from typing import NamedTuple


class Writer(NamedTuple):
    """The party on whose behalf the store is being written."""

    agent: str | None = None  # the agent whose call is running, None outside agent calls
    call_index: int | None = None  # position of that call in `state.results`
    tool: str | None = None  # the tool whose writes are being applied
    tool_call_id: str | None = None
    source: str = "caller"  # "caller", "router", "agent", "tool", "client"


# The store keeps writers and its write log as plain tuples of these fields, in this order,
# and hands out `Writer` / `WriteRecord` when asked: the run loop sets a writer for every router
# call, agent call and tool call, and a plain tuple of atomic values is built by one bytecode and
# is dropped from the garbage collector's watch after its first pass (a NamedTuple is not).
WriterFields = tuple[str | None, int | None, str | None, str | None, str]
LogEntry = tuple[str, str, WriterFields, float]  # key, "set" / "delete", writer, time

CALLER: WriterFields = (None, None, None, None, "caller")


class WriteRecord(NamedTuple):
    """One successful write to a key: what kind of change, by whom, at what time."""

    key: str
    op: str  # "set" or "delete"
    writer: Writer
    at: float  # seconds since the epoch


def write_record(entry: LogEntry) -> WriteRecord:
    """The `WriteRecord` of one entry of the store's write log."""
    key, op, writer, at = entry
    return WriteRecord(key, op, Writer(*writer), at)
