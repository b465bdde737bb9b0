"""What one agent call produced (`InferenceResult`) and its parts.

Slotted dataclasses (see `network.history.record`): the run loop builds a few of them on every step,
unvalidated, from values already of the right type; `to_json` / `from_json` serialize and
validate them through pydantic when they cross a boundary (a thread store, a file).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from network.history.handoffs import HandoffRecord
from network.history.messages import AssistantMessage, Message, ToolCall, ToolMessage
from network.history.record import Record
from network.history.view import HistoryView
from network.history.writes import StateWrite

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema


def _jsonable(value: Any) -> Any:
    """A raw provider response as JSON where possible, else its repr."""
    if value is None or isinstance(value, str | int | float | bool | list | dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:  # a provider object that cannot dump itself
            return repr(value)
    return repr(value)


class _SerializedAsJSON:
    """`Annotated` marker: any value, serialized through `_jsonable` (`PlainSerializer`'s
    schema, built on first use so that `import network` does not import pydantic)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from pydantic_core import core_schema  # noqa: PLC0415 (pydantic: first validation only)

        return core_schema.any_schema(
            serialization=core_schema.plain_serializer_function_ser_schema(
                _jsonable, return_schema=core_schema.any_schema()
            )
        )


RawResponse = Annotated[Any, _SerializedAsJSON()]

MAX_TOKEN_COUNT = 2**53 - 1
"""The largest token count taken from outside (a server's usage, a remote agent's): the
largest integer a JSON reader holds exactly (JavaScript's `Number.MAX_SAFE_INTEGER`, AG-UI's
ceiling for `RUN_FINISHED` usage). A larger figure is no figure: no model reads that many."""


@dataclass(slots=True)
class Usage(Record):
    """Token counts of one inference, or totals over a run.

    `estimated` is True when the counts (or some of the counts summed into them) are the
    client's estimate, not figures the server reported: a server that sends no usage with a
    stream, for instance.

    Attributes:
        prompt_tokens: tokens sent.
        completion_tokens: tokens generated.
        total_tokens: both.
        estimated: see above.
        cached_tokens: prompt tokens the provider read from its cache (part of the prompt).
        reasoning_tokens: completion tokens a reasoning model spent thinking (part of the
            completion), when the server reports them.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False
    cached_tokens: int = 0  # prompt tokens the provider read from its cache (part of prompt)
    reasoning_tokens: int = 0  # completion tokens spent thinking (part of completion)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.estimated or other.estimated,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass(slots=True)
class ToolCallRecord(Record):
    """One tool call the model asked for, and what came of it.

    Attributes:
        id: the tool call's id (the model's, or made up when it sent none).
        name: the tool's name.
        arguments: the arguments the model sent.
        result: what the handler returned (None on error).
        content: the text the model reads back.
        is_error: True when the call failed (unknown tool, invalid arguments, the handler
            raised); `content` then says why.
        error: the error message, when `is_error`.
        duration_ms: how long the handler took.
    """

    id: str
    name: str
    arguments: Any = None
    result: Any = None  # what the handler returned (None on error)
    content: str = ""  # the text the model reads back
    is_error: bool = False
    error: str | None = None
    duration_ms: float = 0.0
    started_at: float = 0.0  # seconds since the epoch
    error_type: str | None = None  # low-cardinality: the exception's type name, "rejected"...
    attempts: int = 1  # tries made (more than one when a `RetryPolicy` retried the call)
    model_only: str | None = None  # what only the model reads after `content` (`ToolMessage`)

    # The factories the run uses: one per outcome, timed from `started` (a `perf_counter`
    # reading). Positional inside: a keyword call costs twice as much, and this runs on every
    # tool call.

    @classmethod
    def succeeded(cls, call: ToolCall, result: Any, content: str, started: float) -> ToolCallRecord:
        """The record of `call` whose handler returned `result` (`content`: its text)."""
        took = time.perf_counter() - started
        return cls(
            call.id, call.name, call.arguments, result, content, False, None, took * 1000,
            time.time() - took,
        )  # fmt: skip

    @classmethod
    def failed(
        cls,
        call: ToolCall,
        message: str,
        error_type: str,
        started: float,
        model_only: str | None = None,
    ) -> ToolCallRecord:
        """The record of `call` that failed with `message` (the model reads "Error: ...",
        then `model_only`, which no client is sent)."""
        took = time.perf_counter() - started
        return cls(
            call.id, call.name, call.arguments, None, f"Error: {message}", True, message,
            took * 1000, time.time() - took, error_type, 1, model_only,
        )  # fmt: skip


@dataclass(slots=True)
class ModelCall(Record):
    """One model request, as the run records it for usage limits and traces.

    An agent call holds one per request it made (`InferenceResult.model_calls`): normally one,
    more when the model retried, each failed attempt being its own record with its `error`.
    A routing agent's requests are on the run context (`RunContext.engine.router_calls`). Neither
    prompt nor answer is kept here: only what a trace or a budget needs.
    """

    model: str  # the model asked for (`gen_ai.request.model`)
    provider: str | None = None  # litellm's provider name, e.g. "openai", "anthropic"
    response_model: str | None = None  # the model that answered, when the provider says
    started_at: float = 0.0  # seconds since the epoch
    duration_ms: float = 0.0
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    cost_usd: float | None = None  # None: the model's price is not known
    error: str | None = None  # the exception's type name, when this attempt failed
    agent: str | None = None  # the agent (or router) that asked


@dataclass(slots=True)
class InferenceResult(Record):
    """One agent call: one model inference plus the tool calls it asked for.

    Attributes:
        agent: the agent's name.
        input: the run's input text.
        prompt: the system instructions sent (rendered from state).
        history: the conversation sent with the request.
        output: the model's message(s): an `AssistantMessage` with text and/or tool calls.
        tool_calls: a `ToolCallRecord` per tool call, in the order the model listed them.
        raw: the provider's raw response (JSON where possible).
        usage: the call's token counts (every attempt, for typed output's re-asks).
        started_at: when the call started, in seconds since the epoch.
        duration_ms: how long it took.
        state_delta: the RFC 6902 operations the call applied to state (no `temp:` keys).
        skipped: True when an `on_start` hook skipped the call.
        output_value: the validated answer of an agent with `output_type` (None otherwise,
            and when the call asked for tools); after a JSON round trip, its JSON form.
        writes: the state writes of the call (`StateWrite`: key, by whom, when), recorded
            when it is committed to a thread; empty otherwise.
        branch: the parallel branch the call ran in (`"fork/agent"`, see `Parallel`), or
            None for a call outside any fan-out.
        error: why the call failed, for a parallel branch that failed under
            `on_error="continue"` (it has no output then); None otherwise.
        handoff: the handoff the call made (`transfer_to_<agent>`, see `agents.handoff`):
            routers follow it, and the thread's next turn starts with its target. None when
            it made none.
        offered_tools: the tools offered to the model on this call, as the OpenAI function
            schemas sent (shared with the agent: read-only); a replay compares them.
        answers: every answer the model gave this call, in order and as it gave it, when
            `output` alone does not say so: the call asked more than once (typed output's
            re-asks), or a capability changed the answer (`on_response`). Empty otherwise:
            `output[0]` is then the one answer, as given. A replay answers from them.
    """

    agent: str
    input: str = ""
    prompt: list[Message] = field(default_factory=list)  # the system instructions sent
    history: HistoryView | list[Message] = field(default_factory=list)  # conversation sent
    output: list[Message] = field(default_factory=list)  # the model's message(s)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    raw: RawResponse = None
    usage: Usage = field(default_factory=Usage)
    started_at: float = 0.0  # seconds since the epoch
    duration_ms: float = 0.0
    state_delta: list[dict[str, Any]] = field(default_factory=list)  # RFC 6902, no temp: keys
    skipped: bool = False  # on_start skipped the call
    # The requests made (retries too), recorded when the run has usage limits or is traced,
    # or when the call went past a request the server refused for its `response_format`.
    # A tuple, so the default is one shared empty value: an unobserved step allocates nothing.
    model_calls: tuple[ModelCall, ...] = ()
    # The tools offered (the agent's schemas, shared, not copied) and the model's answers when
    # `output` alone does not hold them as given: what a replay needs (network.capabilities.
    # replay). Positional in the agent step, like the fields above.
    offered_tools: list[dict[str, Any]] = field(default_factory=list)
    answers: tuple[AssistantMessage, ...] = ()
    # The validated final answer of an agent with `output_type` (None otherwise, and when the
    # call asked for tools instead). After a JSON round trip (a thread store), its JSON form.
    output_value: Any = None
    # Who wrote which key in this call, set when the call is committed to a thread (see
    # `network.history.writes`); `history_of` reads it on later runs.
    writes: tuple[StateWrite, ...] = ()
    branch: str | None = None  # the parallel branch of the call (`network.run.parallel`)
    error: str | None = None  # a failed branch's error (`on_error="continue"`)
    handoff: HandoffRecord | None = None  # the handoff the call made (network.history.handoffs)

    @property
    def text(self) -> str | None:
        """The text of the agent's final message, if it had any."""
        for message in reversed(self.output):
            if isinstance(message, AssistantMessage) and message.content:
                return message.content
        return None

    def messages(self) -> list[Any]:
        """What this call adds to the conversation: its output, then its tool results."""
        messages = list(self.output)
        for call in self.tool_calls:
            messages.append(
                ToolMessage(call.id, call.content, call.name, call.is_error, None, call.model_only)
            )
        return messages
