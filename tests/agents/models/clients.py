"""The two HTTP clients built the same way, for tests that run one scenario on both."""

from __future__ import annotations

from typing import Any

from agents import LiteLLMModel, OpenAIModel


def native(base_url: str, **options: Any) -> Any:
    """`OpenAIModel` on the fake server at `base_url`."""
    return OpenAIModel("openai/fake", api_base=base_url, api_key="sk-test", **options)


def through_litellm(base_url: str, **options: Any) -> Any:
    """`LiteLLMModel` on the fake server at `base_url`."""
    return LiteLLMModel("openai/fake", api_base=base_url, api_key="sk-test", **options)


CLIENTS = (native, through_litellm)
CLIENT_IDS = ("native", "litellm")
