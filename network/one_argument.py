"""Functions a user hands the library to be called with one argument (a router with the run
context, instructions with the run context, a hook with the agent call), checked when they
are given: one that cannot take it (`lambda: ...`, a function of two required parameters)
was taken and failed at every call with a `TypeError` from inside the run.
"""

from __future__ import annotations

import inspect
from typing import Any


def refused_as_one_argument(fn: Any) -> str | None:
    """`fn`'s name and signature (`route(a, b)`), for an error, when it cannot be called with
    one positional argument; None when it can, or when it has no signature to read (a
    builtin: tried when it is called)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(None)
    except TypeError:
        label = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        return f"{label}{signature}"
    return None
