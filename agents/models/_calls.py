"""The `ModelCall` records of one model request, for usage limits and traces."""

from __future__ import annotations

import time
from typing import Any

from agents.models.base import ModelResponse
from network.errors import ModelError
from network.history.results import ModelCall


def model_calls(
    model: Any, agent: str, response: ModelResponse, started_at: float, started: float
) -> list[ModelCall]:
    """What `model` reported of its attempts, else one record timed from `started`.

    `started_at` is the epoch time and `started` the `perf_counter` reading taken just before
    the request.
    """
    if response.attempts:
        return list(response.attempts)
    provider = getattr(model, "provider", None)
    return [
        ModelCall(  # positional: this runs on every step
            getattr(model, "name", None) or type(model).__name__,
            provider if isinstance(provider, str) else None,
            response.model,
            started_at,
            (time.perf_counter() - started) * 1000,
            response.usage,
            response.finish_reason,
            response.cost_usd,
            None,
            agent,
        )
    ]


def failed_model_calls(
    model: Any, agent: str, error: Exception, started_at: float, started: float
) -> tuple[ModelCall, ...]:
    """The records of a request that failed for good, one per attempt, for its chat spans.

    The attempts the model reported (`ModelError.attempts`, each with the provider's error);
    else one record timed from `started`, whose `error.type` is the HTTP status, else the
    type of the provider's exception the `ModelError` wraps, else (a model that raised
    something other than a `ModelError`: a custom `Model`, a scripted failure) the type of
    the exception raised.
    """
    status = None
    cause: BaseException = error
    if isinstance(error, ModelError):
        if error.attempts:
            return tuple(error.attempts)
        cause = error.__cause__ if error.__cause__ is not None else error
        status = error.status_code
    provider = getattr(model, "provider", None)
    return (
        ModelCall(
            getattr(model, "name", None) or type(model).__name__,
            provider if isinstance(provider, str) else None,
            None,
            started_at,
            (time.perf_counter() - started) * 1000,
            error=str(status) if status is not None else type(cause).__name__,
            agent=agent,
        ),
    )
