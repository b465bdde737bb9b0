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


CALLER = Writer()

# NamedTuple's generated __new__ is a Python function; the run loop builds a Writer for every
# router call, agent call and tool call, so it builds them with the C-level tuple constructor:
# `new_record(Writer, (agent, call_index, tool, tool_call_id, source))`. All fields, in order.
new_record = tuple.__new__


class WriteRecord(NamedTuple):
    """One successful write to a key: what kind of change, by whom, at what time."""

    key: str
    op: str  # "set" or "delete"
    writer: Writer
    at: float  # seconds since the epoch
