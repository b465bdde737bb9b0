"""The events of one inference: text messages and tool calls, streamed or after the fact.

When the model streams, chunks become `TextStarted` / `TextContent` and `ToolCallStarted` /
`ToolCallArgs` events (`network.run.events`) as they arrive; when it does not, the whole
answer is reported once it is back. A reasoning model's thinking becomes `ReasoningStarted`,
`ReasoningContent` and `ReasoningEnded` (AG-UI 1.0's REASONING_* on the wire), a reasoning
message of its own id, closed when the answer's first text or tool call arrives (or at the
end). Either way every
message and tool call opened here is closed by `finish`. Listeners (predictive state) are told
of every tool call's arguments as they grow.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence

from agents.models.base import ModelChunk, ReasoningDelta, TextDelta, ToolCallDelta
from network.history.messages import AssistantMessage
from network.ids import new_id
from network.run.emitter import Emitter
from network.run.events import (
    ReasoningContent,
    ReasoningEnded,
    ReasoningStarted,
    TextContent,
    TextEnded,
    TextStarted,
    ToolCallArgs,
    ToolCallEnded,
    ToolCallStarted,
)

ArgsListener = Callable[[str, str, str], Awaitable[None]]
"""`listener(tool_call_id, tool_name, arguments_so_far)`."""


class CallEvents:
    """Translates one inference into events on `emitter`."""

    def __init__(
        self, emitter: Emitter, agent: str, listeners: Sequence[ArgsListener] = ()
    ) -> None:
        self.emitter = emitter
        self.agent = agent
        self.message_id = new_id("msg_")
        self.listeners = listeners
        self._text_open = False
        self._reasoning_id: str | None = None  # the reasoning message open, if any
        self._reasoned = False  # a reasoning message was sent for this answer
        self._streamed = False
        self._tools: dict[int, tuple[str, str]] = {}  # index -> (id, name)
        self._args: dict[int, str] = {}

    async def on_chunk(self, chunk: ModelChunk) -> None:
        """Handle one streamed piece of the answer."""
        self._streamed = True
        emitter = self.emitter
        if isinstance(chunk, ReasoningDelta):
            await self._reason(chunk.text)
            return
        if self._reasoning_id is not None:
            await self._close_reasoning()
        if isinstance(chunk, TextDelta):
            if not chunk.text:
                return
            if not self._text_open:
                await self._open_text()
            await emitter.emit(TextContent(self.message_id, chunk.text))
            return
        if chunk.index not in self._tools:
            call_id = chunk.id or new_id("call_")
            self._tools[chunk.index] = (call_id, chunk.name or "")
            self._args[chunk.index] = ""
            emitter.open_tools.append(call_id)
            await emitter.emit(ToolCallStarted(call_id, chunk.name or "", self.message_id))
        if chunk.arguments:
            call_id, name = self._tools[chunk.index]
            self._args[chunk.index] += chunk.arguments
            await emitter.emit(ToolCallArgs(call_id, chunk.arguments))
            for listener in self.listeners:
                await listener(call_id, name, self._args[chunk.index])

    async def _reason(self, text: str) -> None:
        if not text:
            return
        if self._reasoning_id is None:
            self._reasoning_id = new_id("msg_")
            self._reasoned = True
            self.emitter.open_reasoning.append(self._reasoning_id)
            await self.emitter.emit(ReasoningStarted(self._reasoning_id))
        await self.emitter.emit(ReasoningContent(self._reasoning_id, text))

    async def _close_reasoning(self) -> None:
        reasoning_id, self._reasoning_id = self._reasoning_id, None
        if reasoning_id is not None and reasoning_id in self.emitter.open_reasoning:
            self.emitter.open_reasoning.remove(reasoning_id)
            await self.emitter.emit(ReasoningEnded(reasoning_id))

    async def _open_text(self) -> None:
        self._text_open = True
        self.emitter.open_messages.append(self.message_id)
        await self.emitter.emit(TextStarted(self.message_id, self.agent))

    async def finish(self, message: AssistantMessage) -> None:
        """Report what was not streamed and close everything opened."""
        emitter = self.emitter
        if not self._reasoned and message.reasoning:  # not streamed: the whole of it, first
            await self._reason(message.reasoning)
        await self._close_reasoning()
        if not self._streamed:
            if message.content:
                await self._open_text()
                await emitter.emit(TextContent(self.message_id, message.content))
            for index, call in enumerate(message.tool_calls):
                arguments = call.arguments
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                await self.on_chunk_tool(index, call.id, call.name, text)
        if self._text_open:
            self._text_open = False
            emitter.open_messages.remove(self.message_id)
            await emitter.emit(TextEnded(self.message_id))
        for call_id, _ in self._tools.values():
            if call_id in emitter.open_tools:
                emitter.open_tools.remove(call_id)
                await emitter.emit(ToolCallEnded(call_id))

    async def renewed(self, failed: AssistantMessage) -> CallEvents:
        """Close this answer's events with `failed` (an answer that is asked again) and
        return the events of the next attempt, a message of its own."""
        failed.name = self.agent
        failed.id = self.message_id
        await self.finish(failed)
        return CallEvents(self.emitter, self.agent, self.listeners)

    async def on_chunk_tool(self, index: int, call_id: str, name: str, arguments: str) -> None:
        """Report a whole tool call at once (the model did not stream it)."""
        await self.on_chunk(ToolCallDelta(index=index, id=call_id, name=name))
        if arguments:
            await self.on_chunk(ToolCallDelta(index=index, arguments=arguments))


__all__ = ["ArgsListener", "CallEvents"]
