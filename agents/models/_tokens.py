"""Counting a request's tokens for a context policy: the model's tokenizer, else an estimate.

A model may offer `token_counter()` (an async method returning a function of one wire-format
message, or None when it does not know its tokenizer): `LiteLLMModel` does, through litellm's
tokenizers. Otherwise a message counts about one token per four characters plus a few for its
framing, which is what providers' own rules of thumb say for English text.

Each message is counted once: messages never change once in the history, so the count is kept
in a side table beside a weak reference to the message (as `agents.models._wire` keeps wire
forms), and a long conversation costs a lookup per message kept, never a recount.
"""

from __future__ import annotations

import contextlib
import json
import weakref
from collections.abc import Callable
from typing import Any

from agents.models._wire import to_wire

Counter = Callable[[dict[str, Any]], int]

_counted: dict[tuple[int, int], tuple[weakref.ref[Any], int]] = {}


def estimate(wire: dict[str, Any]) -> int:
    """About four characters per token, plus four for the message's framing."""
    size = len(wire.get("content") or "")
    calls = wire.get("tool_calls")
    if calls:
        size += len(json.dumps(calls))
    return size // 4 + 4


async def counter_of(model: Any) -> Counter:
    """The model's own token counter when it has one that knows the model, else `estimate`."""
    offer = getattr(model, "token_counter", None)
    if callable(offer):
        counter = await offer()
        if counter is not None:
            return counter  # type: ignore[no-any-return]
    return estimate


def tokens_of(message: Any, counter: Counter) -> int:
    """`message`'s token count under `counter`, counted once per message and counter."""
    key = (id(message), id(counter))
    entry = _counted.get(key)
    if entry is not None and entry[0]() is message:
        return entry[1]
    count = int(counter(to_wire(message)))

    def forget(ref: weakref.ref[Any], key: tuple[int, int] = key) -> None:
        if _counted.get(key, (None,))[0] is ref:
            del _counted[key]

    with contextlib.suppress(TypeError):  # a plain dict is not weakly referenceable
        _counted[key] = (weakref.ref(message, forget), count)
    return count


async def request_tokens(model: Any, request: Any) -> int:
    """The tokens of the messages `request` sends (its system messages and conversation),
    counted with `model`'s tokenizer when it has one, else estimated."""
    counter = await counter_of(model)
    count = sum(tokens_of(message, counter) for message in request.system)
    return count + sum(tokens_of(message, counter) for message in request.history)


class CountsRequestTokens:
    """A model client's `request_tokens` (what a shared budget reserves), for the clients
    that count with `request_tokens`: their tokenizer when they have one, else an estimate."""

    async def request_tokens(self, request: Any) -> int:
        """The tokens of the messages `request` sends, as a shared budget reserves them: with
        this model's tokenizer when it has one, else about four characters a token."""
        return await request_tokens(self, request)
