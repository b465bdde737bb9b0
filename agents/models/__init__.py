"""Models: the `Model` protocol, `ScriptedModel`, `OpenAIModel` (native), `LiteLLMModel`, and
`A2AModel` (a remote A2A agent).

Both client modules are light: aiohttp and litellm themselves are imported on first use.
"""

from agents.models import base
from agents.models._response_format import ResponseFormatRefused
from agents.models.a2a import A2AModel
from agents.models.base import *  # noqa: F403 (the protocol and its data: `base.__all__`)
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from agents.models.price import Price
from agents.models.registry import make_model, resolve_model
from agents.models.scripted import ScriptedModel, call

__all__ = [
    "A2AModel",
    "LiteLLMModel",
    "OpenAIModel",
    "Price",
    "ResponseFormatRefused",
    "ScriptedModel",
    "call",
    "make_model",
    "resolve_model",
]
__all__ += base.__all__
