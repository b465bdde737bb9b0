"""`ScriptedModel`: replays scripted answers, and records every request it received.

The test double of the whole suite and the offline default of the examples. Each script
entry is one answer:

- a string: a text answer;
- a `ToolCall`, a `call(name, **arguments)`, or a list of them: tool calls (ids are made up);
- an `AssistantMessage` (its fields checked when the script is made) or a `ModelResponse`:
  used as given;
- an exception instance: raised, as a failing provider would;
- a callable `fn(request) -> any of the above` (sync or async): computed from the request.

A callable passed as `script` itself answers every request. With `stream=True` (or whenever
the caller streams) text is sent in chunks of `chunk_size` characters and tool arguments in
pieces, so streaming consumers see real deltas; an `AssistantMessage` with `reasoning` streams
it first, as a reasoning model's server does.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import json
from collections.abc import Callable, Iterable
from typing import Any

from agents.models._tokens import CountsRequestTokens
from agents.models.base import (
    ChunkHandler,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from network.errors import ModelError
from network.history.messages import AssistantMessage, ToolCall, check_messages
from network.history.results import Usage
from network.numbers import check_number

_ids = itertools.count(1)


def call(name: str, /, **arguments: Any) -> ToolCall:
    """A scripted tool call: `call("write_files", files={...})`."""
    return ToolCall(f"call_{next(_ids)}", name, arguments)


class ScriptedModel(CountsRequestTokens):
    """A model that answers from a script. `requests` holds every request received.

    `ScriptedModel(["hello", call("search", q="owls"), ...])` answers the first request with
    the first entry, the next with the next. Each entry is one answer:

    - a string: a text answer;
    - a `ToolCall`, a `call(name, **arguments)`, or a list of them: tool calls (ids are
      made up);
    - an `AssistantMessage` (its fields checked when the script is made) or a
      `ModelResponse`: used as given;
    - an exception instance: raised, as a failing provider would;
    - a callable `fn(request) -> any of the above` (sync or async): computed from the
      `ModelRequest` (`request.history`, `request.agent`, `request.tools`).

    Args:
        script: the entries, or one callable answering every request.
        name: the model's name (in errors, traces and usage).
        stream: recorded as `model.stream` for the caller to read; it does not decide
            streaming: a scripted answer streams whenever the run streams (a sink reads it
            live, `network.stream`, AG-UI), in pieces, as a server's would.
        chunk_size: characters per text delta when an answer streams (at least 1); tool
            arguments stream in pieces too, and an `AssistantMessage`'s `reasoning` first.
        repeat_last: when the script runs out, answer with its last entry again (else a
            `ModelError` says no answer is left, naming the request and the agent).
        structured_output: what `Agent(output_type=...)`'s "auto" mode uses with this model:
            "native" (the script answers JSON text), "tool" or "prompted".
    """

    provider = "scripted"  # its `gen_ai.provider.name` in traces

    def __init__(
        self,
        script: Iterable[Any] | Callable[[ModelRequest], Any] = (),
        *,
        name: str = "scripted",
        stream: bool = False,
        chunk_size: int = 8,
        repeat_last: bool = False,
        structured_output: str = "native",
    ) -> None:
        self.name = name
        # What `Agent(output_type=...)` uses in its "auto" mode (`agents.capabilities.output`):
        # "native"
        # (the script answers JSON text), "tool" or "prompted".
        self.structured_output = structured_output
        self._fn: Callable[[ModelRequest], Any] | None = script if callable(script) else None
        self._script: list[Any] = [] if callable(script) else list(script)
        for index, entry in enumerate(self._script):  # a bad scripted message fails here
            if isinstance(entry, AssistantMessage):
                self._script[index] = check_messages([entry])[0]
        self._position = 0
        self.requests: list[ModelRequest] = []
        self.stream = stream
        self.chunk_size = check_number(
            "ScriptedModel.chunk_size", chunk_size, integer=True, minimum=1
        )
        self.repeat_last = repeat_last

    @property
    def remaining(self) -> int:
        """How many scripted answers are left."""
        return len(self._script) - self._position

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """Answer with the next scripted entry (or the script function's answer)."""
        self.requests.append(request)
        entry = self._next(request)
        if inspect.isawaitable(entry):
            entry = await entry
        response = self._response(entry)
        if on_chunk is not None:
            await self._stream(response.message, on_chunk)
        return response

    def _next(self, request: ModelRequest) -> Any:
        if self._fn is not None:
            return self._fn(request)
        if self._position >= len(self._script):
            if self.repeat_last and self._script:
                entry = self._script[-1]
            else:
                raise ModelError(
                    f"ScriptedModel {self.name!r} has no answer left for request "
                    f"#{len(self.requests)} (agent {request.agent!r})",
                    model=self.name,
                )
        else:
            entry = self._script[self._position]
            self._position += 1
        if callable(entry) and not isinstance(entry, ToolCall):
            entry = entry(request)
        return entry

    def _response(self, entry: Any) -> ModelResponse:
        # Exact type checks first: the common entries answer without a chain of isinstance.
        kind = type(entry)
        if kind is ToolCall:
            message = _message(None, [_fresh(entry)])
        elif kind is str:
            message = _message(entry, [])
        elif isinstance(entry, BaseException):
            raise entry
        elif isinstance(entry, ModelResponse):
            return entry
        elif isinstance(entry, AssistantMessage):
            message = check_messages([copy.deepcopy(entry)])[0]
        elif isinstance(entry, ToolCall):
            message = _message(None, [_fresh(entry)])
        elif isinstance(entry, list | tuple) and all(isinstance(e, ToolCall) for e in entry):
            message = _message(None, [_fresh(e) for e in entry])
        else:
            raise ModelError(f"ScriptedModel {self.name!r}: cannot answer with {entry!r}")
        return ModelResponse(message=message, usage=_usage(message), raw=None)

    async def _stream(self, message: AssistantMessage, on_chunk: ChunkHandler) -> None:
        thinking = message.reasoning or ""  # a scripted reasoning model thinks first
        for start in range(0, len(thinking), self.chunk_size):
            await on_chunk(ReasoningDelta(thinking[start : start + self.chunk_size]))
        text = message.content or ""
        for start in range(0, len(text), self.chunk_size):
            await on_chunk(TextDelta(text[start : start + self.chunk_size]))
        for index, tool_call in enumerate(message.tool_calls):
            arguments = tool_call.arguments
            text_args = arguments if isinstance(arguments, str) else json.dumps(arguments)
            await on_chunk(ToolCallDelta(index=index, id=tool_call.id, name=tool_call.name))
            for start in range(0, len(text_args), self.chunk_size):
                piece = text_args[start : start + self.chunk_size]
                await on_chunk(ToolCallDelta(index=index, arguments=piece))


def _fresh(tool_call: ToolCall) -> ToolCall:
    """Scripted calls keep their ids; a call without one gets a made-up id."""
    if tool_call.id:
        return tool_call
    return ToolCall(f"call_{next(_ids)}", tool_call.name, tool_call.arguments)


def _message(content: str | None, tool_calls: list[ToolCall]) -> AssistantMessage:
    return AssistantMessage(content, tool_calls)


def _usage(message: AssistantMessage) -> Usage:
    """A rough token count (4 characters a token), so usage totals are exercised offline."""
    completion = len(message.content or "") // 4 + 8 * len(message.tool_calls)
    return Usage(0, completion, completion)
