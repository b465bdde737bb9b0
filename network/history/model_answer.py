"""A model whose `complete()` returns no awaitable: a typed error naming it, not a TypeError.

The `Model` protocol's `complete` is `async def`. One written as a plain `def` that returns its
`ModelResponse` failed the first request with Python's `TypeError: object ModelResponse can't
be used in 'await' expression`, naming neither the model nor the agent. A plain `def` that
returns a coroutine (a wrapper handing on another model's `complete`) is a `Model` all the
same, so a plain `def` cannot be refused when the model is given: `checked_model` refuses one
only when its return annotation says it returns a `ModelResponse`, and every caller of
`complete` tests what it got before awaiting it (`awaitable_answer`): a `ModelError` naming
the model and the agent, raised where a failing provider's is, so the run's record of a failed
request (its `partial_result`, its trace) is the same.
"""

from __future__ import annotations

import inspect
from typing import Any

from network.errors import ModelError


def model_shown(model: Any) -> str:
    """How an error names `model`: its `name` when it has one (text), else its class."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else type(model).__name__


def awaitable_answer(pending: Any, model: Any, agent: str | None) -> Any:
    """`pending`, what `model.complete(...)` returned, when it can be awaited; else a
    `ModelError` naming `model` and `agent` (see the module docstring). Callers test
    `type(pending) is CoroutineType` first: an `async def`'s answer needs no more."""
    if inspect.isawaitable(pending):
        return pending
    shown = model_shown(model)
    kind = "None" if pending is None else f"a {type(pending).__name__}"
    of = f" of agent {agent!r}" if agent else ""
    raise ModelError(
        f"model {shown!r}{of}: its complete() returned {kind}, not an awaitable: a Model "
        "defines `async def complete(self, request, on_chunk=None)` (a plain def must return "
        "the coroutine of one)",
        model=shown,
    )


async def answer_of(model: Any, agent: str | None, *arguments: Any) -> Any:
    """`await model.complete(*arguments)`, what it returned tested first (for the callers
    off the agent step's hot path)."""
    return await awaitable_answer(model.complete(*arguments), model, agent)


__all__ = ["answer_of", "awaitable_answer", "model_shown"]
