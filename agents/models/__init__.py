"""Models: the `Model` protocol, `ScriptedModel` and `LiteLLMModel` (litellm, lazily)."""

from typing import Any

from agents.models.base import (
    ChunkHandler,
    Model,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
)
from agents.models.registry import resolve_model
from agents.models.scripted import ScriptedModel, call

__all__ = [
    "ChunkHandler",
    "LiteLLMModel",
    "Model",
    "ModelChunk",
    "ModelRequest",
    "ModelResponse",
    "ScriptedModel",
    "TextDelta",
    "ToolCallDelta",
    "call",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    # LiteLLMModel's module is light, but keeping it out of `import agents` keeps litellm's
    # import (about 2 s) strictly on first use.
    if name == "LiteLLMModel":
        from agents.models.litellm_model import LiteLLMModel

        return LiteLLMModel
    raise AttributeError(name)
