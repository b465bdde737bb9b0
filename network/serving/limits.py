"""What a stranger can make a server hold or store: bodies, identifiers, list sizes.

- A request body is read up to `limit` bytes and refused beyond it (413 `body_too_large`),
  a declared `content-length` over the limit before a byte is read; one that has not
  arrived whole within `BODY_TIMEOUT_S` seconds is 408 `body_timeout` (a client announcing
  a body it never sends, or sends a byte at a time, held its connection and what it sent
  for as long as it liked).
- A thread id and a run id from a client follow the thread stores' identifier rules
  (`network.threads.ids`: 1 to 256 characters, no control character, no lone surrogate), so
  an id the server takes is one every store can keep: a run id goes with every commit of
  the run, and one a store refuses (a NUL on PostgreSQL) would fail them all after the model
  was paid for. A bad one is 422 `invalid_thread_id` / `invalid_run_id`, naming the field as
  the protocol spells it (AG-UI's `threadId`, A2A's `contextId`, ...).
- A thread list's `limit` is an integer from 1 to `MAX_LIST_LIMIT`.
- A JSON body nested deeper than a parser can follow (`check_json_depth`) is 400
  `invalid_json`, for a protocol whose own parser would fail on it with its exception's text.
"""

from __future__ import annotations

from collections.abc import AsyncIterable

import anyio

from network.errors import InvalidIdError
from network.serving.errors import RequestError
from network.threads.ids import check_id

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
BODY_TIMEOUT_S = 30.0  # a whole body's time: 1 MiB in it is 35 kB/s, a slow phone's upload
MAX_JSON_DEPTH = 200  # pydantic's JSON parser's own limit; the stdlib's recursion fails later
DEFAULT_LIST_LIMIT = 100
MAX_LIST_LIMIT = 1_000


async def read_body(
    chunks: AsyncIterable[bytes],
    declared: str | None,
    limit: int,
    *,
    timeout: float | None = None,
) -> bytes:
    """The body from `chunks` (its `content-length` header `declared`, if any), at most
    `limit` bytes, or a 413 `RequestError`; a 408 one when it is not whole within `timeout`
    seconds (default `BODY_TIMEOUT_S`)."""
    too_large = RequestError(
        413, "body_too_large", f"request body is larger than the limit of {limit} bytes"
    )
    if declared is not None and declared_over(declared, limit):
        raise too_large
    seconds = BODY_TIMEOUT_S if timeout is None else timeout
    parts = []
    size = 0
    with anyio.move_on_after(seconds) as deadline:
        async for chunk in chunks:
            size += len(chunk)
            if size > limit:
                raise too_large
            parts.append(chunk)
    if deadline.cancelled_caught:
        raise RequestError(
            408, "body_timeout", f"request body did not arrive whole within {seconds:g} seconds"
        )
    return b"".join(parts)


def declared_over(declared: str, limit: int) -> bool:
    """Whether a `content-length` header `declared` says more than `limit` bytes (False for
    one that is no count: the body read is counted anyway)."""
    if not (declared.isascii() and declared.isdigit()):
        return False
    # compared by its digits first: `int` refuses a string of more than 4,300 (a ValueError,
    # a 500), and any count longer than the limit's own is over it
    digits = declared.lstrip("0")
    return len(digits) > len(str(limit)) or int(digits or "0") > limit


def check_json_depth(body: bytes) -> None:
    """400 `invalid_json` when `body` is JSON nested more than `MAX_JSON_DEPTH` levels deep.

    A body with fewer brackets than that cannot be so deep and is not parsed here; any other
    fault of the JSON is left to the protocol, which names it."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return
    from pydantic_core import from_json  # noqa: PLC0415 (a server has pydantic loaded)

    try:  # one level added: pydantic's parser takes one more than MAX_JSON_DEPTH (201)
        from_json(b"[" + body + b"]", allow_inf_nan=True)
    except ValueError as exc:
        if "recursion limit exceeded" in str(exc):
            raise RequestError(
                400,
                "invalid_json",
                f"request body is JSON nested more than {MAX_JSON_DEPTH} levels deep",
            ) from None


def check_thread_id(value: object, field: str = "thread_id") -> str:
    """`value` as a thread id, or 422 `invalid_thread_id` naming `field`."""
    return _checked(value, field, "invalid_thread_id")


def check_run_id(value: object, field: str = "run_id") -> str:
    """`value` as a run id, or 422 `invalid_run_id` naming `field`."""
    return _checked(value, field, "invalid_run_id")


def _checked(value: object, field: str, code: str) -> str:
    try:
        return check_id(field, value)
    except InvalidIdError as exc:
        raise RequestError(422, code, str(exc), key=field) from exc


def list_limit(text: str | None) -> int:
    """A thread list's `limit` parameter: an integer from 1 to `MAX_LIST_LIMIT` (422
    `invalid_limit` otherwise); `DEFAULT_LIST_LIMIT` when absent."""
    if text is None:
        return DEFAULT_LIST_LIMIT
    limit = limit_in_range(text)
    if limit is None:
        raise RequestError(
            422,
            "invalid_limit",
            f"limit must be an integer from 1 to {MAX_LIST_LIMIT}",
            key="limit",
        )
    return limit


def limit_in_range(text: str) -> int | None:
    """`text` as a list's limit, an integer from 1 to `MAX_LIST_LIMIT`, or None when it is
    not one."""
    # ASCII digits only ("²" is a digit to `isdigit`, not to `int`), and few of them (`int`
    # refuses more than 4,300)
    digits = text.isascii() and text.isdigit() and len(text) <= len(str(MAX_LIST_LIMIT))
    if not digits or not 1 <= int(text) <= MAX_LIST_LIMIT:
        return None
    return int(text)
