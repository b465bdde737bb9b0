"""What a client learns when something fails: the library's own messages, nothing else.

The library's errors (`AgentNetworkError` subclasses) are written to be read: they name the
state key, tool or agent at fault, so a client is told them as they are, but for the values of
the run's `temp:` keys they may quote, masked as `[temp:<key>]`. Any other exception
(a router's, a store's, a hook's) may hold anything: a connection string, a token, a stack of
someone else's code. The client reads only `internal error (reference err_...)`, code
`internal_error`, and the server logs the whole exception, traceback included, under the same
reference so an operator can find it (`screened`).

A thread store's failure is screened the same way before a run starts (`guarded`): the
client gets 500 `store_failed` with a reference, never the database's text (which may quote
SQL or values).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from network.errors import AgentNetworkError
from network.ids import new_id
from network.logger import LazyLogger
from network.run.temp_sources import error_temp_masks
from network.serving.errors import RequestError
from network.state.temp_masks import masked

INTERNAL_ERROR = "internal_error"
LOGGER = "agent_network.serving"

T = TypeVar("T")

log = LazyLogger(LOGGER)


def screened(error: BaseException, *, logger: str, event: str, **fields: Any) -> tuple[str, str]:
    """`(message, code)` a client may read about `error`.

    A library error is told as it is (`"<Class>: <message>"`, code the class name), every
    `temp:` text of the failed run masked (`network.run.temp_sources`); any other
    is logged in full as `event` on the stdlib / structlog logger `logger` (with `fields`
    and a new `reference`) and told only as an internal error with that reference.
    """
    if isinstance(error, AgentNetworkError):
        name = type(error).__name__
        text = f"{name}: {error}"
        masks = error_temp_masks(error)  # a library error may quote a run's temp: value
        return (masked(text, masks) if masks else text), name
    reference = new_id("err_")
    log_failure(error, logger=logger, event=event, reference=reference, **fields)
    return (
        f"internal error (reference {reference}); the server's log has the details",
        INTERNAL_ERROR,
    )


def log_failure(error: BaseException, *, logger: str, event: str, **fields: Any) -> None:
    """The whole exception, traceback included, wherever the application sends its logs."""
    import structlog  # noqa: PLC0415 (structlog: kept out of `import network`)

    if structlog.is_configured():
        LazyLogger(logger).error(event, **fields, exc_info=error)
    else:  # stdlib logging: its handlers format the traceback themselves
        shown = " ".join(f"{key}=%s" for key in fields)
        logging.getLogger(logger).error(
            f"{event} {shown}".rstrip(), *fields.values(), exc_info=error
        )


async def guarded(operation: str, pending: Awaitable[T]) -> T:
    """A store call whose failure the client hears of only as `store_failed` (500)."""
    try:
        return await pending
    except RequestError:
        raise
    except Exception as error:  # the store's own text may quote SQL or values: logged only
        raise store_failure(operation, error, log, "serving.store_failed") from error


def store_failure(
    operation: str, error: BaseException, logger: LazyLogger, event: str
) -> RequestError:
    """500 `store_failed` for a failed store call, with only a reference; the exception is
    logged as `event` on `logger` under the same reference."""
    reference = new_id("err_")
    logger.error(event, operation=operation, reference=reference, exc_info=error)
    return RequestError(
        500,
        "store_failed",
        f"the thread store failed (reference {reference}); the server's log has the details",
    )
