"""A model whose every request reserves on the run's shared budgets before it is sent.

`metered(accounts, model)` wraps the model of one agent call (the `Metering` capability's
request stage) or of a routing agent's decision, when the run has shared budgets
(`RunContext.engine.budget_accounts`,
`network.run.budgets`). Each `complete` is one model request: it reserves on every account
what the request may spend, sends it only when that fits (else `BudgetExceeded`, before
anything is sent), settles what it really spent when it is answered, and releases the
reservation when it failed, unless the failure is a request the server answered that the run
may go past (`ModelError.counted_as_request`: a server refusing a typed answer's
`response_format`): that one is settled as one request per attempt, with no tokens and no
cost (the server refused it, and reported no usage). So a typed answer's re-ask, made
through the same model, reserves again; and in a durable run, where the model call is a
recorded step, the reservation is made inside the step: a replayed step returns its recorded
answer and reserves nothing.

What a request may spend (the reservation), decided here:
- input: the system messages and the conversation sent, counted with the model's
  tokenizer when it has one (`LiteLLMModel`, through litellm), else about four characters a
  token (`agents.models._tokens`, as a context policy counts), plus the tool schemas at
  four characters a token;
- output: the request's `max_tokens` (or `max_completion_tokens`, `max_output_tokens`)
  parameter, else the budget's `output_estimate`;
- cost: both at the model's `price` when the model has one before answering; else none
  (the answer's own cost, when it tells one, is settled after).
What it spent: the answer's prompt and completion tokens, its cost, and one request per
attempt the model made. A model of one's own may report what is no figure (a negative or
absurd count, a cost that is NaN, infinite or negative): the request then counts what it
reserved, as a reservation never settled does, so a bad report can neither give a key back
what it spent nor fail the run at the store (the agent receiving a count that is no count
then refuses the answer: `agents.models._answer_shape`). (The HTTP clients already estimate
such counts themselves: `agents.models._usage`.)
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from types import CoroutineType
from typing import Any

from network.errors import ModelError
from network.history.model_answer import awaitable_answer
from network.history.model_io import ChunkHandler, Model, ModelRequest, ModelResponse
from network.history.results import MAX_TOKEN_COUNT, Usage
from network.run.budgets.account import BudgetAccount, release_all, reserve_all, settle_all

_OUTPUT_PARAMS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


class MeteredModel:
    """`model`, its requests reserved on `accounts` first (see the module docstring).

    Everything else (its name, provider, price, tokenizer, how it takes typed output) is
    the wrapped model's."""

    __slots__ = ("accounts", "model")

    def __init__(self, model: Model, accounts: Sequence[BudgetAccount]) -> None:
        self.model = model
        self.accounts = accounts

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """The wrapped model's answer to `request`, reserved, then settled or released."""
        held = await reserve_all(self.accounts, await asked_by(self.model, request, self.accounts))
        try:
            pending = self.model.complete(request, on_chunk)
            if type(pending) is not CoroutineType:  # a plain def's answer, awaitable or not
                pending = awaitable_answer(pending, self.model, request.agent)
            response: ModelResponse = await pending
        except ModelError as error:
            if error.counted_as_request:  # answered, and a run may go past it: a request made
                await settle_all(held, 0, 0.0, len(error.attempts) or 1)
            else:
                await release_all(held)
            raise
        except BaseException:
            await release_all(held)
            raise
        # read as a report of figures only: an answer of the wrong shape (a custom model's
        # None, a usage that is None) settles what it reserved; the agent receiving it says
        # what is wrong (`agents.models._answer_shape`), with no hold left behind
        usage = getattr(response, "usage", None)
        prompt: Any = getattr(usage, "prompt_tokens", None)
        completion: Any = getattr(usage, "completion_tokens", None)
        cost: Any = getattr(response, "cost_usd", None) or 0.0
        attempts = getattr(response, "attempts", ())
        await settle_all(
            held,
            prompt + completion if _count(prompt) and _count(completion) else None,
            cost if _cost(cost) else None,
            (len(attempts) if isinstance(attempts, list | tuple) else 0) or 1,
        )
        return response


def metered(accounts: Sequence[BudgetAccount], model: Model) -> Model:
    """`model`, metered on `accounts` (the run's shared budgets)."""
    return MeteredModel(model, accounts)


async def asked_by(
    model: Model, request: ModelRequest, accounts: Sequence[BudgetAccount]
) -> list[tuple[int, float]]:
    """What `request` may spend, for each account: (tokens, cost in USD)."""
    prompt = await prompt_tokens(model, request)
    if request.tools:
        prompt += len(json.dumps(request.tools, default=str)) // 4
    params = request.params or {}
    asked_output = next(
        (params[name] for name in _OUTPUT_PARAMS if type(params.get(name)) is int), None
    )
    price = getattr(model, "price", None)
    cost_of = getattr(price, "cost", None)
    asked = []
    for account in accounts:
        output = asked_output if asked_output is not None else account.budget.output_estimate
        cost = float(cost_of(Usage(prompt, output, prompt + output))) if callable(cost_of) else 0.0
        # an absurd `max_tokens` parameter asks for no more than a ledger can count
        asked.append((min(prompt + output, MAX_TOKEN_COUNT), cost))
    return asked


def _count(value: Any) -> bool:
    """A token count a model may report: an int from 0 to `MAX_TOKEN_COUNT`."""
    return type(value) is int and 0 <= value <= MAX_TOKEN_COUNT


def _cost(value: Any) -> bool:
    """A cost a model may report: a finite number >= 0 (an int within a float's range: the
    ledger keeps a double, and `math.isfinite` raises OverflowError past it)."""
    if type(value) is int:
        return 0 <= value <= sys.float_info.max
    return type(value) is float and math.isfinite(value) and value >= 0


async def prompt_tokens(model: Model, request: ModelRequest) -> int:
    """The tokens of the messages `request` sends: the model's own count when it offers one
    (`request_tokens`), else about four characters a token plus four per message."""
    count = getattr(model, "request_tokens", None)
    if callable(count):
        return int(await count(request))
    return sum(_estimate(message) for message in (*request.system, *request.history))


def _estimate(message: Any) -> int:
    """About four characters a token of the message as the wire carries it, plus four."""
    content = getattr(message, "content", None)
    size = len(content) if isinstance(content, str) else 0
    calls = getattr(message, "tool_calls", None)
    if calls:
        size += len(json.dumps([_wire_call(call) for call in calls], default=str))
    return size // 4 + 4


def _wire_call(call: Any) -> dict[str, Any]:
    arguments = call.arguments
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": text}}
