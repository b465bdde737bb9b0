"""Turning a model string into a `Model`, once per string, and choosing the client.

`openai/...` strings, and any model given an `api_base`, are served by the native client
(`OpenAIModel`, httpx); every other provider goes through litellm (`LiteLLMModel`). The switch
that forces litellm for everything: `client="litellm"` on `make_model`, the environment
variable `AGENT_NETWORK_MODEL_CLIENT=litellm`, or building `LiteLLMModel(...)` yourself.

A mapping such as `{"model": "openai/local", "api_base": "http://127.0.0.1:8080/v1"}` is a
model described as data (`make_model`'s arguments): what the command line puts on agents to
point them at an endpoint (`network.cli.endpoint`), since `network` never imports the model
classes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from network.errors import ConfigurationError

CLIENT_ENV = "AGENT_NETWORK_MODEL_CLIENT"
_CLIENTS = ("auto", "native", "litellm")
_cache: dict[str, Any] = {}


def resolve_model(model: Any) -> Any:
    """A `Model` object as is; a string or a mapping as a (cached) model from `make_model`."""
    if isinstance(model, str):
        found = _cache.get(model)
        if found is None:
            found = _cache[model] = make_model(model)
        return found
    if isinstance(model, Mapping):
        named = next((name for name in model if not isinstance(name, str)), None)
        if named is not None:  # sorting mixed keys was a TypeError naming no option
            raise ConfigurationError(
                f"a model mapping's keys are make_model's option names (strings), got {named!r}"
            )
        key = repr(sorted(model.items()))
        found = _cache.get(key)
        if found is None:
            arguments = dict(model)
            name = arguments.pop("model", None)
            if not isinstance(name, str) or not name:
                raise ConfigurationError("a model mapping needs a 'model' string")
            try:
                found = _cache[key] = make_model(name, **arguments)
            except TypeError as exc:
                raise ConfigurationError(f"model {name!r}: {exc}") from exc
        return found
    if callable(getattr(model, "complete", None)):
        return model
    raise ConfigurationError(f"{model!r} is neither a model name nor a Model")


def make_model(
    model: str, *, api_base: str | None = None, client: str | None = None, **options: Any
) -> Any:
    """A model for `model` (`"provider/name"`), on the client that suits it.

    Args:
        model: a model string, e.g. `"openai/gpt-4o-mini"`, `"anthropic/claude-..."`, or
            `"hosted_vllm/<name>"` with `api_base`.
        api_base: the server's base URL; given, the native client serves any model string.
        client: `"auto"` (default), `"native"` or `"litellm"`; default: the environment
            variable `AGENT_NETWORK_MODEL_CLIENT`, else `"auto"`.
        **options: `timeout`, `max_retries`, `stream`, `api_key`, `price` (a `Price`),
            model parameters, ... as `OpenAIModel` and `LiteLLMModel` take them.
    """
    if not isinstance(model, str) or not model.strip():
        raise ConfigurationError(
            f"make_model takes a model name such as 'openai/gpt-4o-mini', got {model!r}"
        )
    chosen = client or os.environ.get(CLIENT_ENV) or "auto"
    if chosen not in _CLIENTS:
        raise ConfigurationError(
            f"model {model!r}: client {chosen!r} is not one of {', '.join(_CLIENTS)} "
            f"(from {'client=' if client else CLIENT_ENV})"
        )
    native = chosen == "native" or (
        chosen == "auto" and (api_base is not None or model.startswith("openai/"))
    )
    if native:
        return OpenAIModel(model, api_base=api_base, **options)
    return LiteLLMModel(model, api_base=api_base, **options)
