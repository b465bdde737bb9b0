"""OpenAI-compatible providers the native client knows by their model-string prefix.

A model string is `"<provider>/<model>"`, litellm's convention. For the prefixes below the
native client knows where the server is by default and which environment variable holds the
key; given an `api_base`, any prefix works (the model name sent is what follows it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Provider:
    """Where an OpenAI-compatible provider listens and where its key usually lives."""

    prefix: str
    base_url: str | None  # None: a self-hosted server, `api_base` required
    key_env: tuple[str, ...]  # environment variables tried in order
    base_env: tuple[str, ...] = ()  # environment variables that may override base_url


PROVIDERS = {
    p.prefix: p
    for p in (
        Provider(
            "openai",
            "https://api.openai.com/v1",
            ("OPENAI_API_KEY",),
            ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
        ),
        Provider("openrouter", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",)),
        Provider("groq", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",)),
        Provider(
            "together_ai", "https://api.together.xyz/v1", ("TOGETHER_API_KEY", "TOGETHERAI_API_KEY")
        ),
        Provider("deepseek", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",)),
        Provider("hosted_vllm", None, ("HOSTED_VLLM_API_KEY",), ("HOSTED_VLLM_API_BASE",)),
    )
}


def split_model(model: str) -> tuple[str, str]:
    """`("openai", "gpt-4o-mini")` from `"openai/gpt-4o-mini"`; no prefix reads as openai."""
    prefix, slash, rest = model.partition("/")
    if not slash:
        return "openai", model
    return prefix, rest


def default_base_url(prefix: str) -> str | None:
    """The provider's URL: its environment override, else its public endpoint."""
    provider = PROVIDERS.get(prefix)
    if provider is None:
        return None
    for name in provider.base_env:
        if value := os.environ.get(name):
            return value
    return provider.base_url


def key_from_env(prefix: str) -> str | None:
    """The provider's API key from its usual environment variable, if set."""
    provider = PROVIDERS.get(prefix)
    names = provider.key_env if provider is not None else ()
    for name in names:
        if value := os.environ.get(name):
            return value
    return None


def key_names(prefix: str) -> tuple[str, ...]:
    """The environment variables the key is read from (for error messages)."""
    provider = PROVIDERS.get(prefix)
    return provider.key_env if provider is not None else ()
