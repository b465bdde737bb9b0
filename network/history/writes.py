"""`StateWrite`: one state write an agent call made, kept with the call in a thread's history.

During a run, the state's write log answers "who wrote this key, and when" (`history_of`). A
thread outlives its runs, so when a run commits an agent call to its thread, the writes of that
call (its agent's, its tools', and the router's and caller's writes that went into its delta)
are stored with it, beside its `state_delta`; `history_of(key)` on a later run reads them back,
lazily, from the thread's earlier calls. Which agent and which call are the call's own; the
rest is here. Values are not kept (the delta holds them), and `temp:` keys never are.
"""

from __future__ import annotations

from dataclasses import dataclass

from network.history.record import Record


@dataclass(slots=True, frozen=True)
class StateWrite(Record):
    """One successful write to `key` (`op`: "set" or "delete") at `at` (seconds since the
    epoch), made by `source` ("caller", "router", "agent", "tool", "client"); `tool` and
    `tool_call_id` name the tool call that made it; `run_id` the run; `branch` the parallel
    branch of the call (`Parallel`), if any."""

    key: str
    op: str
    at: float
    source: str
    tool: str | None = None
    tool_call_id: str | None = None
    run_id: str | None = None
    branch: str | None = None
