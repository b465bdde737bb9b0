"""What a reader outside the process may learn of an exception raised inside a run.

The library's own errors (`AgentNetworkError` subclasses) are written to be read: they name the
key, tool or agent at fault, and go out as they are. Any other exception (a router's, a model
client's, a hook's, a tool's) may hold anything: a connection string with its password, a
token, a provider's raw answer. Where such an exception's text would leave the process, it is
replaced by `internal error (reference err_...)`, and the whole exception, traceback included,
is logged under that reference (`run.error_screened`, at ERROR) so an operator can find it.

Used where a failure's text is read beyond the caller's own code: a sub-run's failure (which
the supervisor's model, its tool result, the AG-UI client and the stored conversation all read)
and a tool's own exception when the tool keeps its errors from the client
(`@tool(private_errors=True)`). The AG-UI server screens a run's own failure by the same rule
(`network.agui.run_errors`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from network.errors import AgentNetworkError
from network.ids import new_id
from network.logger import LOGGER_NAME, LazyLogger
from network.run.temp_sources import error_temp_masks
from network.state.temp_masks import masked

INTERNAL_ERROR = "internal_error"  # the code of a screened failure (RUN_ERROR's, SUBAGENT_ERROR's)

_log = LazyLogger()


def screened(error: BaseException, **where: Any) -> str:
    """The text of `error` a client may read: a library error's own message (the `temp:`
    texts of the run it failed masked: `network.run.temp_sources`); for any other
    exception, an `internal error (reference err_...)` line, the exception logged in full
    under that reference with `where` (the run, the tool, ...)."""
    if isinstance(error, AgentNetworkError):
        text = str(error) or type(error).__name__
        masks = error_temp_masks(error)  # a failed sub-run's: it may quote its temp: values
        return masked(text, masks) if masks else text
    reference = log_screened(error, **where)
    return f"internal error (reference {reference}); the server's log has the details"


def log_screened(error: BaseException, **where: Any) -> str:
    """Log `error` whole, traceback included, under a new reference; return the reference."""
    reference = new_id("err_")
    if _structlog_configured():
        _log.error("run.error_screened", reference=reference, exc_info=error, **where)
    else:  # stdlib logging: its handlers format the traceback themselves
        fields = " ".join(f"{key}={value}" for key, value in where.items())
        logging.getLogger(LOGGER_NAME).error(
            "run.error_screened reference=%s %s", reference, fields, exc_info=error
        )
    return reference


def _structlog_configured() -> bool:
    module = sys.modules.get("structlog")  # not imported yet: it cannot have been configured
    return module is not None and bool(module.is_configured())
