"""Warnings that point at the user's line, not the library's.

A warning raised deep in the library would name a library file, which tells its reader
nothing about what to change. `warn` walks up the stack to the first frame outside the
library's packages (`network`, `agents`, `routers`) and outside the concurrency machinery a
run goes through (anyio, asyncio), and attributes the warning to it: the line that built the
network, decorated the tool, or called the function. `warn_at` attributes it to a given
function's definition (a tool's, when what is wrong is the tool).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
_LIBRARY = tuple(str(_ROOT / package) for package in ("network", "agents", "routers"))
_MACHINERY = ("anyio", "asyncio", "concurrent", "contextlib.py", "threading.py")


def _ours(filename: str) -> bool:
    """Whether a frame's file is the library's or the machinery a run goes through."""
    if filename.startswith(_LIBRARY):
        return True
    parts = Path(filename).parts
    return any(part in _MACHINERY for part in parts[-3:])


def warn(message: str | Warning, category: type[Warning] | None = None) -> None:
    """`warnings.warn(message, category)` attributed to the user's frame (see the module
    docstring); the library's caller when every frame is the library's."""
    frame = sys._getframe(1)  # the caller of `warn`: stacklevel 2 for `warnings.warn`
    level = 2
    while frame is not None and _ours(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    if frame is None:
        level = 3  # no frame of the user's: the caller of the function that warned
    warnings.warn(message, category, stacklevel=level)


def warn_at(function: Callable[..., Any], message: str, category: type[Warning]) -> None:
    """The warning attributed to `function`'s definition (its file and first line), or to
    the user's frame when it has no code object (a builtin, a C function) or is the library's
    own (the function an `agent.as_tool()` wraps: the user's line is the `as_tool` call)."""
    method = getattr(function, "__call__", None)  # noqa: B004 - a callable object's __call__
    code = getattr(function, "__code__", None) or getattr(method, "__code__", None)
    if code is None or code.co_filename.startswith(_LIBRARY):
        warn(message, category)
        return
    module = getattr(function, "__module__", None) or "<unknown>"
    warnings.warn_explicit(message, category, code.co_filename, code.co_firstlineno, module=module)


__all__ = ["warn", "warn_at"]
