"""The rules every thread store applies to the identifiers it is given.

Thread ids, user ids and app names come from outside (an HTTP body, a URL, a caller), and
each store has its own limits: PostgreSQL refuses NUL in text, lone surrogates cannot be
encoded for any driver, and an index has a maximum key size. So the rules are checked once,
the same way for every store and before any store is touched: an identifier is a string of
1 to `MAX_ID_LENGTH` characters, not only whitespace, with no control character (U+0000 to
U+001F, U+007F to U+009F) and no lone surrogate. Anything else is `InvalidIdError` naming
the field. One exception: the empty user id is the anonymous user (a thread created without
a `user_id`).
"""

from __future__ import annotations

import re
from typing import Any

from network.errors import InvalidIdError
from network.utf8 import SURROGATES

MAX_ID_LENGTH = 256
_FORBIDDEN = re.compile(f"[\x00-\x1f\x7f-\x9f{SURROGATES}]")


def check_id(field: str, value: Any, *, allow_empty: bool = False) -> str:
    """`value` if it is a valid identifier, else `InvalidIdError` naming `field` and why."""
    if not isinstance(value, str):
        raise InvalidIdError(f"{field} must be a string, got {type(value).__name__}", field=field)
    if allow_empty and value == "":
        return value
    if not value.strip():
        raise InvalidIdError(f"{field} must not be empty", field=field)
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdError(
            f"{field} is {len(value)} characters long, over the limit of {MAX_ID_LENGTH}",
            field=field,
        )
    found = _FORBIDDEN.search(value)
    if found is not None:
        char = found.group()
        kind = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
        raise InvalidIdError(
            f"{field} holds {kind} (U+{ord(char):04X}) at position {found.start()}, which a "
            "thread store cannot keep",
            field=field,
        )
    return value


def check_ids(*, thread_id: Any = None, user_id: Any = None, app_name: Any = None) -> None:
    """Check each identifier given (None means not given)."""
    if thread_id is not None:
        check_id("thread_id", thread_id)
    if user_id is not None:
        check_id("user_id", user_id, allow_empty=True)  # "": the anonymous user
    if app_name is not None:
        check_id("app_name", app_name)
