"""Turning a model string into a `Model`, once per string."""

from __future__ import annotations

from typing import Any

from agents.models.litellm_model import LiteLLMModel
from network.errors import ConfigurationError

_cache: dict[str, Any] = {}


def resolve_model(model: Any) -> Any:
    """A `Model` object as is; a string as a (cached) `LiteLLMModel`."""
    if isinstance(model, str):
        found = _cache.get(model)
        if found is None:
            found = _cache[model] = LiteLLMModel(model)
        return found
    if callable(getattr(model, "complete", None)):
        return model
    raise ConfigurationError(f"{model!r} is neither a model name nor a Model")
