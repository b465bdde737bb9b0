"""The `Model` protocol and the data that crosses it (re-exported by `agents.models.base`).

It lives with the history because the run's stages (`network.run.capability`) hand these
objects to capabilities, and the network layers never import `agents`.

A model takes a `ModelRequest` and returns a `ModelResponse`. When the caller passes `on_chunk`,
the model streams: it awaits `on_chunk` with each `TextDelta`, `ToolCallDelta` and
`ReasoningDelta` as they arrive, and still returns the whole response at the end.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from network.history.messages import AssistantMessage
from network.history.results import ModelCall, Usage


@dataclass(slots=True, frozen=True)
class TextDelta:
    """A piece of the assistant's text."""

    text: str


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A piece of a tool call: its id and name come with the first piece, then argument text."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(slots=True, frozen=True)
class ReasoningDelta:
    """A piece of a reasoning model's thinking, streamed beside its answer.

    Servers for reasoning models (vLLM, llama.cpp, DeepSeek, OpenRouter) send it as
    `reasoning_content` / `reasoning` deltas; it is kept on the answer
    (`AssistantMessage.reasoning`) and never sent back to the model.
    """

    text: str


ModelChunk = TextDelta | ToolCallDelta | ReasoningDelta
ChunkHandler = Callable[[ModelChunk], Awaitable[None]]


@dataclass(slots=True)
class ModelRequest:
    """One inference request: instructions, conversation, tools and how to use them.

    `system` and `history` are kept apart so a long conversation is never copied to build a
    request; `messages` joins them for models that need one list.

    Attributes:
        system: the system messages (the agent's rendered instructions).
        history: the conversation so far.
        tools: the tools offered, as OpenAI function schemas.
        tool_choice: "auto", "required", "none" or one tool's name; None without tools.
        agent: the name of the agent asking.
        params: model parameters (temperature, max_tokens, ...).
        response_format: structured output, in OpenAI's shape
            (`{"type": "json_schema", "json_schema": {...}}`), for an agent with
            `output_type` in native mode; None otherwise.
    """

    system: Sequence[Any]
    history: Sequence[Any]
    tools: list[dict[str, Any]] = field(default_factory=list)  # OpenAI function schemas
    tool_choice: str | None = None  # "auto", "required", "none" or a tool's name
    agent: str | None = None
    params: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, ...
    # Structured output (`agents.capabilities.output`): `{"type": "json_schema", "json_schema":
    # {...}}`,
    # the OpenAI shape that litellm and OpenAI-compatible servers take as it is.
    response_format: dict[str, Any] | None = None

    @property
    def messages(self) -> list[Any]:
        """System messages followed by the conversation."""
        return [*self.system, *self.history]

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered."""
        return [tool["function"]["name"] for tool in self.tools]


@dataclass(slots=True)
class ModelResponse:
    """What the model answered, with token usage and the provider's raw response.

    `tool_choice_relaxed` is True when the server refused to force a tool call and the
    request was sent with `tool_choice="auto"` instead (`agents.models._tool_choice`).
    `model`, `cost_usd` and `attempts` feed usage limits and traces; a model that cannot tell
    leaves them empty (and the caller times the request as one attempt).

    Attributes:
        message: the `AssistantMessage`: text, tool calls, or both.
        usage: the inference's token counts.
        raw: the provider's raw response.
        finish_reason: why the model stopped ("stop", "tool_calls", "length", ...), if known.
        tool_choice_relaxed: see above.
        model: the model that answered, when the provider says.
        cost_usd: the request's price, when known.
        attempts: every attempt when the request was retried, the answered one last.
    """

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    raw: Any = None
    finish_reason: str | None = None
    tool_choice_relaxed: bool = False
    model: str | None = None  # the model that answered, when the provider says
    cost_usd: float | None = None  # what the request cost, when the model knows its price
    attempts: Sequence[ModelCall] = ()  # when retried: every attempt, the answered one last


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a `ModelRequest`."""

    name: str

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """Answer `request`; with `on_chunk`, await it with every delta as the answer streams.

        Optionally, a model says how it takes an agent's `output_type` through a
        `structured_output` attribute ("native", "tool" or "prompted", or a sync/async method
        returning one); see `agents.capabilities.output`.
        """
        ...
