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


class WriteRecord(NamedTuple):
    """One successful write to a key: what kind of change, by whom, at what time."""

    key: str
    op: str  # "set" or "delete"
    writer: Writer
    at: float  # seconds since the epoch
