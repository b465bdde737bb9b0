"""The `ModelCall` records of one model request, for usage limits and traces."""

from __future__ import annotations

import time
from typing import Any

from agents.models.base import ModelResponse
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
