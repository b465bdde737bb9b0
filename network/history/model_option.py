"""The `model` option's one check (`Agent(model=...)`, `Network(default_model=...)`).

What a model option may be is what `agents.models.registry.resolve_model` can resolve: a model
string, a mapping of `make_model` arguments (with a `"model"` string), a `Model` object (anything
with a `complete` method), or None (the network's default, or no default). Anything else used
to be accepted and fail at the first call, with a TypeError from deep in the run; it is refused
when the agent or network is made, naming it and the option. So is a model class given for an
instance (`model=ScriptedModel`), and a `complete` that is a plain def annotated to return a
`ModelResponse` (not awaitable); one without that annotation may be a wrapper returning another
model's coroutine, and is tested as it answers (`network.history.model_answer`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from network.errors import ConfigurationError
from network.history.model_io import ModelResponse


def checked_model(owner: str, option: str, model: Any) -> Any:
    """`model` when it is a model option (see the module docstring); else a
    `ConfigurationError` naming `owner` (`"agent 'a'"`) and `option` (`"model"`)."""
    if model is None or (isinstance(model, str) and model):
        return model
    if isinstance(model, str):
        raise ConfigurationError(f"{owner}: {option} is an empty model name")
    if isinstance(model, Mapping):
        name = model.get("model")
        if not isinstance(name, str) or not name:
            raise ConfigurationError(
                f"{owner}: {option} as a mapping needs a 'model' string (the arguments of "
                f"make_model), got {name!r}"
            )
        return model
    if isinstance(model, type):  # its `complete` reads the request as `self`: an unrelated
        # AttributeError from inside the model at the first request
        raise ConfigurationError(
            f"{owner}: {option} is the class {model.__qualname__}, not a model: give an "
            f"instance ({model.__qualname__}(...))"
        )
    complete = getattr(model, "complete", None)
    if callable(complete):
        if not _takes_request_and_on_chunk(complete):  # else a TypeError at the first call
            raise ConfigurationError(
                f"{owner}: {option} {type(model).__name__}'s complete() cannot be called as "
                "complete(request, on_chunk): a Model defines `async def complete(self, "
                "request, on_chunk=None)`"
            )
        if _answers_unawaited(complete):  # else a ModelError at the first request
            raise ConfigurationError(
                f"{owner}: {option} {type(model).__name__}'s complete() is a plain def that "
                "returns a ModelResponse: a Model defines `async def complete(self, request, "
                "on_chunk=None)` (a plain def must return the coroutine of one)"
            )
        return model
    raise ConfigurationError(
        f"{owner}: {option} must be a model string, a mapping of make_model arguments, a Model "
        f"object or None, got {model!r}"
    )


def _takes_request_and_on_chunk(complete: Any) -> bool:
    """Whether `complete(request, on_chunk)` binds, as the agent step calls it (True when
    Python cannot tell: no signature to read)."""
    try:
        inspect.signature(complete).bind(None, None)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _answers_unawaited(complete: Any) -> bool:
    """Whether `complete` is a plain def whose return annotation says it returns a
    `ModelResponse`, not the coroutine of one. A plain def without that annotation may be a
    wrapper returning another model's coroutine, which is a Model: it is tested when it
    answers (`network.history.model_answer`)."""
    # a decorator's plain def around an async def hands on its coroutine, with the async def's
    # annotations (`functools.wraps`): any async def down the `__wrapped__` chain is a Model's
    try:
        innermost = inspect.unwrap(complete, stop=inspect.iscoroutinefunction)
    except ValueError:  # a chain that wraps itself: nothing to tell
        return False
    if inspect.iscoroutinefunction(innermost):
        return False
    try:
        returned = inspect.signature(complete, eval_str=True).return_annotation
    except Exception:  # no signature, or an annotation that names what is not importable here
        return False
    return isinstance(returned, type) and issubclass(returned, ModelResponse)


__all__ = ["checked_model"]
