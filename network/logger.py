"""The library's logger: silent unless the application turned logging on.

The library never configures logging. It follows the stdlib convention for libraries: its
stdlib logger `agent_network` has a `NullHandler`, so a run prints nothing until the
application configures logging, and then its lines go wherever the application sends them:

- `logging.basicConfig(level=logging.INFO)` (or any stdlib configuration enabling INFO for
  `agent_network`): lines such as `run.started run_id=... network=...` go through stdlib
  logging;
- `structlog.configure(...)`: the library logs through the application's structlog
  configuration instead, filtered by its level like the application's own lines.

`info_enabled()` answers "would an INFO line go anywhere?" without building a logger, so a
quiet run pays nothing for logging.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

LOGGER_NAME = "agent_network"

logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())


def get_logger(name: str = LOGGER_NAME, **bound: Any) -> Any:
    """A structlog logger bound to `bound`: the application's structlog when it configured
    structlog, otherwise one writing to the stdlib logger `name` (silent by default)."""
    import structlog  # noqa: PLC0415 (structlog: kept out of `import network`)

    if structlog.is_configured():
        return structlog.get_logger(name).bind(**bound)
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=[structlog.stdlib.filter_by_level, _render],
        wrapper_class=structlog.stdlib.BoundLogger,
    ).bind(**bound)


class LazyLogger:
    """A module-level logger that picks its backend at each call, not at import (the
    application may configure logging after importing the library)."""

    __slots__ = ("name",)

    def __init__(self, name: str = LOGGER_NAME) -> None:
        self.name = name

    def __getattr__(self, method: str) -> Any:
        return getattr(get_logger(self.name), method)


def stdlib_info_enabled(name: str = LOGGER_NAME) -> bool | None:
    """Whether INFO is enabled for the stdlib logger `name`, or None when the application
    configured structlog (then structlog's configuration decides).

    Asked by every run: it imports nothing (structlog not imported yet cannot have been
    configured) and takes logging's lock only the first time for a name (a stdlib logger,
    once made, is the same object for good).
    """
    structlog = sys.modules.get("structlog")
    if structlog is not None and structlog.is_configured():
        return None
    logger = _stdlib_loggers.get(name)
    if logger is None:
        logger = _stdlib_loggers[name] = logging.getLogger(name)
    return logger.isEnabledFor(logging.INFO)


_stdlib_loggers: dict[str, logging.Logger] = {}


def _render(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> str:
    """`event key=value ...`: one readable line for a stdlib handler."""
    text = str(event.pop("event", ""))
    fields = " ".join(f"{key}={_value(value)}" for key, value in event.items())
    return f"{text} {fields}" if fields else text


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if text and " " not in text and "=" not in text else repr(text)
