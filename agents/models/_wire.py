"""Messages in the OpenAI chat-completions wire format, each converted once.

A run's conversation only grows, and a message is not changed once it is in the history, so
each message is converted the first time it is sent and the dict is reused for every later
request of the run: a step costs a lookup per message instead of a conversion.

The converted dicts live in a side table keyed by `id(message)` next to a weak reference to
the message, instead of on the message itself: a field would take part in the messages' `==`
and their JSON, and a copy would carry a cached form its own later edits no longer match.
The weak reference drops the entry when the message is garbage collected and guards against
a recycled `id`.

Next to the dict, the native client keeps the message's JSON text (`to_wire_json`): its
request body is assembled from those pieces, so a message is serialized once per run too.

An assistant message holding only reasoning (an AG-UI client's reasoning with no answer after
it) is not sent: it converts to `UNSENT`, left out of every request (a model must not see an
empty turn of its own; reasoning is never sent back).

The dicts are shared between requests: code that sends them (litellm) must not mutate them.
litellm's OpenAI-compatible routes only rewrite user messages whose content is a list, which
these never are.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from typing import Any

from network.history.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from network.run.tool_names import TOOL_NAME, made_safe

# id(message) -> [weak reference to it, its wire dict, its JSON text or None until asked for]
_converted: dict[int, list[Any]] = {}

UNSENT: dict[str, Any] = {"role": "assistant", "unsent": True}  # see the module docstring


def to_wire(message: Any) -> dict[str, Any]:
    """`message` as an OpenAI chat message dict (cached; do not mutate the result).

    A plain dict is taken to be in wire format already and is returned as is.
    """
    key = id(message)
    entry = _converted.get(key)
    if entry is not None and entry[0]() is message:
        return entry[1]  # type: ignore[no-any-return]
    if isinstance(message, dict):
        return message
    return _remember(message, convert(message))[1]  # type: ignore[no-any-return]


def to_wire_json(message: Any) -> str:
    """`message` as the JSON text of its wire dict (cached with it)."""
    entry = _converted.get(id(message))
    if entry is None or entry[0]() is not message:
        if isinstance(message, dict):
            return json.dumps(message, ensure_ascii=False)
        entry = _remember(message, convert(message))
    text = entry[2]
    if text is None:
        text = entry[2] = "" if entry[1] is UNSENT else json.dumps(entry[1], ensure_ascii=False)
    return text  # type: ignore[no-any-return]


def _remember(message: Any, wire: dict[str, Any]) -> list[Any]:
    key = id(message)

    def forget(ref: weakref.ref[Any], key: int = key) -> None:
        # Only drop the entry if it is still this message's (it always is: an id is not
        # reused before the object it named is gone, which is when this runs).
        if _converted.get(key, (None,))[0] is ref:
            del _converted[key]

    entry = _converted[key] = [weakref.ref(message, forget), wire, None]
    return entry


def to_wire_list(system: Sequence[Any], history: Sequence[Any]) -> list[dict[str, Any]]:
    """The system messages then the conversation, as one list of wire dicts."""
    wires = [to_wire(m) for m in system] + [to_wire(m) for m in history]
    if UNSENT in wires:  # rare: one scan in C, no call per message
        wires = [w for w in wires if w is not UNSENT]
    return wires


def _participant_name(name: Any) -> str | None:
    """A user message's `name` as providers take it: OpenAI refuses one with a space or any
    of `<|\\/>` (a 400 on every request of the thread: an AG-UI client's "Jane Doe"), so a
    name beyond `[A-Za-z0-9_-]{1,64}` is sent made safe ("Jane_Doe", accents dropped, not
    the letters under them), and one with nothing left is not sent."""
    if not isinstance(name, str):
        return None
    if TOOL_NAME.fullmatch(name):
        return name
    return made_safe(name)[:64] or None


def convert(message: Any) -> dict[str, Any]:
    """Convert one message, uncached."""
    if isinstance(message, UserMessage):
        wire: dict[str, Any] = {"role": "user", "content": message.content}
        name = _participant_name(message.name) if message.name else None
        if name:
            wire["name"] = name
        return wire
    if isinstance(message, AssistantMessage):
        if message.content is None and not message.tool_calls and message.reasoning:
            return UNSENT
        # The agent's name is not sent: it is not the model's identity, and several providers
        # reject `name` on assistant messages.
        # `content` is always sent, "" when there is no text: OpenAI allows leaving it out
        # when there are tool calls, but llama.cpp's chat templates (and others) refuse that.
        wire = {"role": "assistant", "content": message.content or ""}
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments_text(call.arguments)},
                }
                for call in message.tool_calls
            ]
        return wire
    if isinstance(message, ToolMessage):
        content = message.content
        if message.model_only:  # a private tool error: the model reads it, no client does
            content = f"{content}\n{message.model_only}"
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    raise TypeError(f"cannot send {type(message).__name__} to a model: {message!r}")


def _arguments_text(arguments: Any) -> str:
    # The wire carries arguments as a JSON string; a model's invalid JSON is sent back verbatim.
    return arguments if isinstance(arguments, str) else json.dumps(arguments)
