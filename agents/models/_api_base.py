"""Whether a model string litellm serves needs an `api_base` it was not given.

An OpenAI-compatible provider that is a server of the user's own (`hosted_vllm/`, `lm_studio/`,
`litellm_proxy/`, ...) has no address of its own: given none (no `api_base`, nothing in its
environment variable), litellm sends the request to OpenAI's endpoint, `api.openai.com`, with
whatever key it finds: the prompt goes to a third party and the error, when there is one,
names the wrong server. `LiteLLMModel` refuses such a model before anything is sent, with a
`ConfigurationError` naming the model and `api_base`.

Which providers those are is litellm's to say, not a list of ours: a provider is in
`litellm.openai_compatible_providers`, litellm resolves no base URL for it
(`get_llm_provider`, which reads its environment variable), and its chat configuration,
asked for the URL it would call without one, names OpenAI's host or refuses (some send
through the openai SDK with no configuration of their own: OpenAI's host too). Whatever
litellm cannot answer here (a provider it does not know, an internal that moved) refuses
nothing: the call then goes as litellm sends it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

OPENAI_HOST = "api.openai.com"


def needs_api_base(litellm: Any, model: str, provider: str, resolved_base: str | None) -> bool:
    """Whether `model` (of litellm's `provider`, whose base URL litellm resolved to
    `resolved_base` with no `api_base` given) would be sent to OpenAI's endpoint."""
    if resolved_base or provider in ("", "openai"):
        return False
    try:
        if provider not in litellm.openai_compatible_providers:
            return False
        from litellm.types.utils import LlmProviders  # noqa: PLC0415 (litellm: loaded already)
        from litellm.utils import ProviderConfigManager  # noqa: PLC0415 (litellm)

        name = model.split("/", 1)[1] if "/" in model else model
        config = ProviderConfigManager.get_provider_chat_config(
            model=name, provider=LlmProviders(provider)
        )
    except Exception:  # litellm cannot say: refuse nothing
        return False
    if config is None:  # sent through the openai SDK, whose default is OpenAI's endpoint
        return True
    try:
        url = config.get_complete_url(
            api_base=None,
            api_key=None,
            model=name,
            optional_params={},
            litellm_params={},
            stream=False,
        )
    except TypeError:  # a configuration asked otherwise: litellm cannot say here
        return False
    except Exception:  # litellm itself refuses it without one (azure_ai's "api_base is required")
        return True
    return urlparse(str(url)).hostname == OPENAI_HOST
