"""Who wrote a state key, and when."""

from __future__ import annotations

from typing import Any, NamedTuple


class Writer(NamedTuple):
    """The party on whose behalf the store is being written."""

    agent: str | None = None  # the agent whose call is running, None outside agent calls
    call_index: int | None = None  # position of that call in `state.results`
    tool: str | None = None  # the tool whose writes are being applied
    tool_call_id: str | None = None
    source: str = "caller"  # "caller", "router", "agent", "tool", "client"
    branch: str | None = None  # the parallel branch that made the write (`Parallel`), if any


WriterFields = tuple[str | None, int | None, str | None, str | None, str, str | None]
"""A `Writer`'s fields as a plain tuple: what the store holds as its current writer and keeps
in its write log. A plain tuple of strings and ints is cheaper to build than a NamedTuple (no
Python-level `__new__`), and the garbage collector stops tracking it at its first pass (it
never does for a NamedTuple), so the log entries every step leaves behind cost the collector
nothing once they are old: with many runs alive at once, that is most of the heap it would
otherwise rescan. `as_writer` turns one into the public `Writer`."""

# The store keeps its write log as flat plain tuples (key, "set" / "delete", time, then the
# writer's fields: no tuple inside, so the collector untracks an entry at its first pass) and
# hands out `WriteRecord`s when asked.
LogEntry = tuple[Any, ...]

CALLER = Writer()
"""The writer outside any run: the code that made or seeded the state."""

CALLER_FIELDS: WriterFields = (None, None, None, None, "caller", None)
"""`CALLER` as the store holds it."""


def as_writer(fields: WriterFields) -> Writer:
    """The public `Writer` of fields the store holds."""
    return fields if type(fields) is Writer else Writer._make(fields)


def with_branch(fields: WriterFields, branch: str) -> WriterFields:
    """The same writer, in the parallel branch `branch`."""
    return (*fields[:5], branch)


def router_writer(call_index: int) -> WriterFields:
    """The router, choosing what runs after `call_index` calls."""
    return (None, call_index, None, None, "router", None)


def agent_writer(agent: str, call_index: int) -> WriterFields:
    """An agent's own writes during its call number `call_index`."""
    return (agent, call_index, None, None, "agent", None)


def tool_writer(agent: str, call_index: int, tool: str, tool_call_id: str) -> WriterFields:
    """A tool call's writes, made on behalf of the agent's call number `call_index`."""
    return (agent, call_index, tool, tool_call_id, "tool", None)


class WriteRecord(NamedTuple):
    """One successful write to a key: what kind of change, by whom, at what time.

    `run_id` names the run that wrote it when it was an earlier run on the same thread (read
    back from the thread's history); None for the current run's own writes.
    """

    key: str
    op: str  # "set" or "delete"
    writer: Writer
    at: float  # seconds since the epoch
    run_id: str | None = None


def write_record(entry: LogEntry) -> WriteRecord:
    """The `WriteRecord` of one entry of the store's write log."""
    return WriteRecord(entry[0], entry[1], Writer._make(entry[3:]), entry[2])
