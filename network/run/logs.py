"""structlog logging, written from the run's events.

The library never configures logging (see `network.logger`): a run logs nothing until the
application turns logging on. When INFO would go nowhere (stdlib logging unconfigured or above
INFO, or structlog configured above INFO) the run subscribes nothing, so a quiet run builds no
events. Event names: run.started, agent.started, agent.finished, tool.called, state.changed,
run.finished, run.failed; every line carries the run_id.

`run.started` carries the run's `thread_id`: the stored thread it continues, or the thread id
an AG-UI client gave; None for a run on no thread (whose AG-UI events name the run's id as
their thread, which the protocol requires, but which is no thread to look up). `run.failed`
quotes the run's error with every text of a `temp:` value masked as `[temp:<key>]`
(`network.state.temp_masks`), as telemetry masks it: an error may quote such a value, and
logs must not keep what telemetry does not. The values masked are those of every store the
run ran (`network.run.temp_sources`): a failed parallel branch's and a sub-run's too.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from network.logger import get_logger, stdlib_info_enabled
from network.run.emitter import EventSink
from network.run.events import (
    RunCancelled,
    RunError,
    RunEvent,
    RunFinished,
    RunInterrupted,
    RunStarted,
    StateDelta,
    StepFinished,
    StepStarted,
    ToolCallStarted,
    ToolResult,
)
from network.state.temp_masks import Masks, masked


@functools.cache
def _filtering_levels() -> dict[Any, int]:
    """structlog's level-filtering wrapper classes (one cached class per level) -> min level."""
    import structlog  # noqa: PLC0415 (structlog: kept out of `import network`)

    levels = (logging.NOTSET, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)
    return {structlog.make_filtering_bound_logger(level): level for level in (*levels, 50)}


def _info_filtered_out() -> bool:
    """Whether INFO lines would go nowhere: stdlib logging (the default) does not enable INFO
    for the library, or the configured structlog wrapper is a filtering logger above INFO.

    Answered from the configuration alone: binding a logger to ask it costs microseconds on
    every run, and a filtering logger's level is fixed by its class. Any other wrapper class
    (stdlib's, say, whose level can change) is asked through a bound logger.
    """
    enabled = stdlib_info_enabled()
    if enabled is not None:
        return not enabled
    import structlog  # noqa: PLC0415 (structlog: kept out of `import network`)

    level = _filtering_levels().get(structlog.get_config()["wrapper_class"])
    return level is not None and level > logging.INFO


def _enabled(logger: Any, level: int) -> bool:
    check = getattr(logger, "is_enabled_for", None) or getattr(logger, "isEnabledFor", None)
    if check is None:
        return True
    try:
        return bool(check(level))
    except Exception:  # a custom wrapper class with another signature
        return True


def logging_sink(
    run_id: str,
    network_name: str,
    *,
    thread_id: str | None = None,
    masks: Callable[[], Masks] | None = None,
) -> EventSink | None:
    """A sink that logs a run's events, or None when the application silenced INFO.

    `thread_id`: the run's thread (None: it has none); `masks()`: the `temp:` texts masked in
    the `run.failed` line (`network.run.temp_sources.run_masks`: the run's store's, its
    branches' and its sub-runs')."""
    if _info_filtered_out():
        return None
    log = get_logger(run_id=run_id, network=network_name)
    if not _enabled(log, logging.INFO):
        return None
    debug = _enabled(log, logging.DEBUG)
    open_tools: dict[str, str] = {}

    async def sink(event: RunEvent) -> None:
        if event.subagent_run_id is not None:
            return  # a sub-run's (`as_tool`): its own sink logs it, under its own run id
        if isinstance(event, RunStarted):
            log.info("run.started", thread_id=thread_id)
        elif isinstance(event, StepStarted):
            log.info("agent.started", agent=event.name)
        elif isinstance(event, StepFinished):
            log.info("agent.finished", agent=event.name)
        elif isinstance(event, ToolCallStarted):
            open_tools[event.call_id] = event.name
        elif isinstance(event, ToolResult):
            name = open_tools.pop(event.call_id, None)
            log.info("tool.called", tool=name, tool_call_id=event.call_id)
        elif isinstance(event, StateDelta) and debug:
            log.debug(
                "state.changed",
                ops=len(event.ops),
                paths=[op.get("path") for op in event.ops],
            )
        elif isinstance(event, RunFinished):
            log.info("run.finished", outcome=_outcome(event))
        elif isinstance(event, RunError):
            found = masks() if masks is not None else None
            message = masked(event.message, found) if found else event.message
            log.error("run.failed", error=message, code=event.code)

    return sink


def _outcome(event: RunFinished) -> str:
    """How the run ended, as the log names it."""
    if isinstance(event, RunCancelled):
        return "cancelled"
    return "interrupt" if isinstance(event, RunInterrupted) else "success"
