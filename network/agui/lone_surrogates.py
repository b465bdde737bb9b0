"""A request body whose JSON holds a lone surrogate: the 422 names the field that holds it.

JSON may spell half of a UTF-16 pair on its own (`"\\ud800"`), and a client may send the
three bytes such a half would be in CESU-8 (`ED A0 80`). Neither is text a thread store, a
driver or a model can take (`network.utf8`), so the body is refused; but pydantic's JSON
parser refuses it as "unexpected end of hex escape at line 1 column 95", which says neither
what is wrong nor where. So when the parser refused a body, it is read again by the standard
library (which keeps lone surrogates) and the first string holding one, key or value, is
named as the protocol spells it:

- in `threadId` or `runId`: 422 `invalid_thread_id` / `invalid_run_id` (`"key"` the field),
  as every other bad id (`network.serving.limits`);
- in the client's `state` (a key, or anywhere in a key's value): 422 `invalid_state`, `"key"`
  the state key, as every other bad state write;
- anywhere else: 422 `invalid_request`, `"key"` the field's path (`messages.0.content`).

The message says "lone surrogate" and "not valid UTF-8 text", with the character's position;
a field or state key that itself holds one is shown with it escaped (`k\\ud800`), so the
error body is valid UTF-8 itself. A body that is not UTF-8 in another way (a stray `FF`
byte) is named by its byte offset. Anything else wrong with the body is left to the parser's
own message.
"""

from __future__ import annotations

import json
from typing import Any

from network.serving.errors import RequestError
from network.serving.limits import check_run_id, check_thread_id
from network.utf8 import lone_surrogate_at

Path = tuple[str | int, ...]


def lone_surrogate_error(body: bytes) -> RequestError | None:
    """The 422 naming the first string of `body` that holds a lone surrogate (or the byte
    where it is not UTF-8); None when the body has none (its fault is another one)."""
    try:
        text = body.decode("utf-8", "surrogatepass")  # CESU-8 halves read as lone surrogates
    except UnicodeDecodeError as exc:
        return RequestError(
            422,
            "invalid_request",
            f"not a RunAgentInput: the body is not valid UTF-8 text (byte {exc.start})",
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's recursion limit
        return None  # the parser's message says where (its own limit, deeper, is lower)
    found = first_lone_surrogate(data)
    if found is None:
        return None
    path, value = found
    if path in (("threadId",), ("runId",)):
        check = check_thread_id if path == ("threadId",) else check_run_id
        try:
            check(value, str(path[0]))
        except RequestError as refused:
            return refused
    at = lone_surrogate_at(value) or 0
    where = f"has a lone surrogate (U+{ord(value[at]):04X}) at position {at}"
    why = "which is not valid UTF-8 text"
    if path[0] == "state" and len(path) > 1:
        key = shown(path[1])
        if len(path) == 2 and value == path[1]:
            what = f"the state key '{key}'"
        else:
            inner = "".join(
                f"[{part}]" if isinstance(part, int) else f"['{shown(part)}']" for part in path[2:]
            )
            what = f"the value of key '{key}'{inner and f' (at {inner})'}"
        return RequestError(422, "invalid_state", f"state: {what} {where}, {why}", key=key)
    field = ".".join(shown(part) for part in path)
    return RequestError(
        422, "invalid_request", f"not a RunAgentInput: {field} {where}, {why}", key=field
    )


def first_lone_surrogate(data: Any) -> tuple[Path, str] | None:
    """The path of the first string of JSON `data` (a key or a value, in document order)
    that holds a lone surrogate, and that string; None when there is none."""
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if lone_surrogate_at(value) is not None:
                return path, value
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):  # popped in document order
                stack.append(((*path, key), item))
                stack.append(((*path, key), key))  # the key before its value
        elif isinstance(value, list):
            stack.extend(((*path, index), item) for index, item in reversed(list(enumerate(value))))
    return None


def shown(part: str | int) -> str:
    """A path's part as an error may show it: a lone surrogate escaped (`\\ud800`)."""
    return str(part).encode("utf-8", "backslashreplace").decode("utf-8")
