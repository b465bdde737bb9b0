"""structlog logging, written from the run's events.

The library never configures logging (see `network.logger`): a run logs nothing until the
application turns logging on. When INFO would go nowhere (stdlib logging unconfigured or above
INFO, or structlog configured above INFO) the run subscribes nothing, so a quiet run builds no
events. Event names: run.started, agent.started, agent.finished, tool.called, state.changed,
run.finished, run.failed; every line carries the run_id.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from network.logger import get_logger, stdlib_info_enabled
from network.run.emitter import EventSink


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


def logging_sink(run_id: str, network_name: str) -> EventSink | None:
    """A sink that logs a run's events, or None when the application silenced INFO."""
    if _info_filtered_out():
        return None
    log = get_logger(run_id=run_id, network=network_name)
    if not _enabled(log, logging.INFO):
        return None
    debug = _enabled(log, logging.DEBUG)
    open_tools: dict[str, str] = {}

    async def sink(event: Any) -> None:
        if getattr(event, "subagent_run_id", None) is not None:
            return  # a sub-run's (`as_tool`): its own sink logs it, under its own run id
        kind = event.type.value if hasattr(event.type, "value") else str(event.type)
        if kind == "RUN_STARTED":
            log.info("run.started", thread_id=event.thread_id)
        elif kind == "STEP_STARTED":
            log.info("agent.started", agent=event.step_name)
        elif kind == "STEP_FINISHED":
            log.info("agent.finished", agent=event.step_name)
        elif kind == "TOOL_CALL_START":
            open_tools[event.tool_call_id] = event.tool_call_name
        elif kind == "TOOL_CALL_RESULT":
            name = open_tools.pop(event.tool_call_id, None)
            log.info("tool.called", tool=name, tool_call_id=event.tool_call_id)
        elif kind == "STATE_DELTA" and debug:
            log.debug(
                "state.changed",
                ops=len(event.delta),
                paths=[getattr(op, "path", None) for op in event.delta],
            )
        elif kind == "RUN_FINISHED":
            outcome = getattr(event, "outcome", None)
            log.info("run.finished", outcome=getattr(outcome, "type", None) or "success")
        elif kind == "RUN_ERROR":
            log.error("run.failed", error=event.message, code=event.code)

    return sink
