"""Running a tool in a worker process that can be killed (`@tool(isolated=True)`).

A thread cannot be stopped, a process can: an isolated tool runs in one of anyio's worker
processes, and when its call times out or its run is cancelled the process is killed
(SIGKILL) and replaced, so a tool that hangs for good costs nothing after its call ends.

The price: the function must be importable by name (defined at module level), its arguments
and result must pickle, and it cannot be given a `ToolContext` or `State` (state lives in the
run's process; return values and use `outputs_to_state` instead). The worker process is
reused between calls, so a tool should not rely on module-level state either way.
"""

from __future__ import annotations

import importlib
from typing import Any

from network.errors import ConfigurationError


def reference(fn: Any, tool_name: str) -> tuple[str, str]:
    """(module, qualname) under which a worker process finds `fn`, or `ConfigurationError`."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise ConfigurationError(
            f"tool {tool_name!r}: an isolated tool must be a function defined at module level "
            "(its worker process imports it by name)"
        )
    return module, qualname


def call_by_name(module: str, qualname: str, kwargs: dict[str, Any]) -> Any:
    """Import the tool's function in the worker process and call it (runs in the worker)."""
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    target = getattr(target, "fn", target)  # `@tool` put a Tool where the function was
    return target(**kwargs)
