"""The `Model` protocol and the data that crosses it: defined in `network.history.model_io`
(the run's stages hand them to capabilities), named here where models are written."""

from network.history.model_io import (
    ChunkHandler,
    Model,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)

__all__ = [
    "ChunkHandler",
    "Model",
    "ModelChunk",
    "ModelRequest",
    "ModelResponse",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
]
