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
    branch: str | None = None  # the parallel branch that made the write (`Parallel`), if any


# The store keeps its write log as plain tuples and hands out `WriteRecord`s when asked: a log
# entry is made for every write, and a plain tuple is cheaper to build than a NamedTuple.
LogEntry = tuple[str, str, Writer, float]  # key, "set" / "delete", writer, time

CALLER = Writer()
"""The writer outside any run: the code that made or seeded the state."""


def router_writer(call_index: int) -> Writer:
    """The router, choosing what runs after `call_index` calls."""
    return Writer(None, call_index, None, None, "router")


def agent_writer(agent: str, call_index: int) -> Writer:
    """An agent's own writes during its call number `call_index`."""
    return Writer(agent, call_index, None, None, "agent")


def tool_writer(agent: str, call_index: int, tool: str, tool_call_id: str) -> Writer:
    """A tool call's writes, made on behalf of the agent's call number `call_index`."""
    return Writer(agent, call_index, tool, tool_call_id, "tool")


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
    key, op, writer, at = entry
    return WriteRecord(key, op, writer, at)
