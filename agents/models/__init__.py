"""Models: the `Model` protocol, `ScriptedModel` and `LiteLLMModel` (litellm, lazily)."""

from agents.models.base import (
    ChunkHandler,
    Model,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallDelta,
)
from agents.models.litellm_model import LiteLLMModel
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
