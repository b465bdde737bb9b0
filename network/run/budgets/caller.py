"""The run whose code is running now, so that a run started inside it counts against it.

A tool that delegates the way pydantic-ai's users write it first, `await other.run(...)`,
starts a run of its own from inside the caller's run. Without a link, that run would spend
outside the caller's `UsageLimits` (and its usage report): six requests under
`max_model_calls=3`, reported as three. So the engine marks the run it executes as the
running one (a context variable, inherited by the tasks and worker threads the run starts),
and a new run that finds one becomes its sub-run for spending (`network.run.subrun.adopt`):
before each request it checks the caller's limits too, counting the caller's requests and
tool calls under way; what it spends is reported to the caller as it goes.

Decisions where the issue is silent:
- every run started inside a run is adopted, from wherever it is started (a tool, a hook, a
  router, a context policy's summarising agent): each is spending the caller asked for;
- a run started in another thread (a blocking tool calling `run_sync`, which runs its own
  event loop there) cannot report to the caller's loop safely. When the caller has usage
  limits (or carries usage), it refuses to start, with a `ConfigurationError` saying to make
  the tool async and `await network.run(...)`; when the caller has none, there is nothing it
  would escape, and it runs on its own.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar, Token

from network.errors import ConfigurationError
from network.run.context import RunContext

Running = tuple[RunContext, int] | None  # the run, and the thread its event loop runs in

_RUNNING: ContextVar[Running] = ContextVar("agent_network_running_run", default=None)


def enter(ctx: RunContext) -> Token[Running]:
    """Mark `ctx` as the running run (its engine, at the start); `leave` with the token."""
    return _RUNNING.set((ctx, threading.get_ident()))


def leave(token: Token[Running]) -> None:
    """The run ended: the run around it (if any) is the running one again."""
    _RUNNING.reset(token)


def running_run() -> RunContext | None:
    """The run whose code is running now, if any (the tasks and worker threads a run starts
    inherit it): to read, as telemetry reads where the run is in its trace."""
    found = _RUNNING.get()
    return None if found is None else found[0]


def calling_run(network: str) -> RunContext | None:
    """The run a new run of network `network` is started inside, if any (see above)."""
    found = _RUNNING.get()
    if found is None:
        return None
    caller, thread = found
    if thread == threading.get_ident():
        return caller
    if caller.engine.budget is None:
        return None  # no limits to escape: the run is one of its own
    tool = caller.agent.name if caller.agent is not None else "a tool"
    raise ConfigurationError(
        f"network {network!r} was started with run_sync in another thread, inside a call "
        f"of agent {tool!r} of run {caller.run_id!r}, which has usage limits: a run started "
        "there cannot count against them. Make the tool async and `await network.run(...)` "
        "there (or give the agent `network.as_tool()`): the run then counts against its caller"
    )
