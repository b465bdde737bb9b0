"""`app(network, observers=...)`: the extra event sinks of each served run, checked.

`observers(ctx)` is the application's code, called for each run once the request was
admitted, before its stream begins. A value that is not a function is refused when the app is
built (`ConfigurationError`); a call that raises, or returns anything but a list of event
sinks, refuses the request with 500 `internal_error` and a reference the server logs with the
whole exception, and the run does not start. Before, such a run answered 200 with an empty
stream: no RUN_STARTED, no RUN_ERROR, nothing for a client to tell what happened.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from network.errors import ConfigurationError
from network.ids import new_id
from network.run.context import RunContext
from network.run.emitter import Observer, Sink
from network.serving.errors import RequestError
from network.serving.screening import INTERNAL_ERROR, log_failure

Observers = Callable[[RunContext], Sequence[Sink]]
"""`app`'s `observers=`: the extra event sinks of a run, made for its context."""

LOGGER = "agent_network.agui"


def check_observers(observers: Any) -> Observers | None:
    """`observers` when it is None or a function; else a `ConfigurationError` naming it."""
    if observers is not None and not callable(observers):
        raise ConfigurationError(
            "app: observers must be a function of a run's context returning its extra event "
            f"sinks, got {type(observers).__name__}"
        )
    checked: Observers | None = observers
    return checked


def observer_sinks(observers: Observers | None, ctx: RunContext) -> list[Sink]:
    """The sinks `observers` makes for run `ctx`, or a 500 `RequestError` (logged with the
    exception under its reference) when it raises or returns what is no list of sinks."""
    if observers is None:
        return []
    try:
        made = observers(ctx)
        if not isinstance(made, Sequence) or isinstance(made, str | bytes):
            raise ConfigurationError(
                f"app: observers(ctx) must return a list of event sinks, got {type(made).__name__}"
            )
        for sink in made:
            if not (isinstance(sink, Observer) or callable(sink)):
                raise ConfigurationError(
                    "app: observers(ctx) returned what is no event sink (a function taking "
                    f"each event, an Observer or a Listener): {type(sink).__name__}"
                )
        return list(made)
    except Exception as error:
        reference = new_id("err_")
        log_failure(
            error,
            logger=LOGGER,
            event="agui.observers_failed",
            reference=reference,
            run_id=ctx.run_id,
        )
        raise RequestError(
            500,
            INTERNAL_ERROR,
            f"internal error (reference {reference}); the server's log has the details",
        ) from error
