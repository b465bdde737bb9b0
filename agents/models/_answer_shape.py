"""A model's answer checked for its shape before an agent call reads it.

The `Model` protocol's `complete` returns a `ModelResponse`. The shipped clients always do; a
model of one's own (or a `ScriptedModel` given a `ModelResponse`, used as given) may return
None, a string, or a response whose message, tool calls or usage are not what the types say.
Read as it was, such an answer failed the run far from the model, with an error naming
neither: `AttributeError: 'NoneType' object has no attribute 'message'`, a `TypeError` from
summing usage, a pydantic `ValidationError` of an AG-UI event when the run streamed. So the
answer's shape is checked where the agent receives it, and a wrong one is a `ModelError`
naming the model, the agent and the field, raised as a failing provider's is.

What is checked is the shape the run reads (types), and the token counts: a count that is
no count (negative, or past `MAX_TOKEN_COUNT`, 2**53 - 1, which no price or AG-UI client
takes) is refused too, naming the field, so that `result.usage`, the usage limits, a shared
budget's settling and telemetry never read different figures for one answer (each read such a
count its own way: kept as given, as 0 or the ceiling, as what was reserved). The shipped
clients estimate a server's bad counts instead (`agents.models._usage`): a server's answer is
not the user's code. Other values stay the model's (an unknown tool name, arguments that are
no JSON object are answered where they are used). A well-formed answer costs a few tests.

One value is mended rather than refused: tool-call ids that repeat within the answer, or are
empty. A call's id is how its result, its approval and its AG-UI events find it, so two calls
sharing one would answer, approve or stream as one. The shipped clients give every call an
id of its own (`_tool_call_ids.own_id`); a custom model's answer gets the same treatment here:
the first call keeps its id, a repeated or empty one gets a fresh id (in a copy of the answer:
a `ScriptedModel`'s script is never changed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from agents.models._tool_call_ids import own_id
from network.errors import ModelError
from network.history.messages import AssistantMessage, ToolCall
from network.history.model_io import ModelResponse
from network.history.results import MAX_TOKEN_COUNT, Usage

_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cached_tokens",
    "reasoning_tokens",
)

_MAX_TOTAL = 2 * MAX_TOKEN_COUNT  # a total is a prompt and a completion summed


def checked_answer(response: Any, model: Any, agent: str) -> ModelResponse:
    """`response` when it has a `ModelResponse`'s shape, else a `ModelError` saying what is
    wrong, naming `model` and `agent`."""
    # The common answer first, in identity tests only and in this one call: the library's own
    # classes, each field of its exact type. `_problem` (which a subclass, a tuple of calls or
    # a `Mapping` of arguments also passes) builds type unions and asks `abc`: three times the
    # instructions, once a model request, in the step's hot path (`benchmarks/step_budget.py`).
    if type(response) is ModelResponse:
        message, usage, cost = response.message, response.usage, response.cost_usd
        if (
            type(message) is AssistantMessage
            and type(usage) is Usage
            and (cost is None or type(cost) is float or type(cost) is int)
            and type(usage.prompt_tokens) is int
            and type(usage.completion_tokens) is int
            and type(usage.total_tokens) is int
            and type(usage.cached_tokens) is int
            and type(usage.reasoning_tokens) is int
            # each count from 0 to 2**53 - 1 (one test: an or of such counts is one too, and
            # an or with a negative is negative); the total, two of them summed
            and 0
            <= (
                usage.prompt_tokens
                | usage.completion_tokens
                | usage.cached_tokens
                | usage.reasoning_tokens
            )
            <= MAX_TOKEN_COUNT
            and 0 <= usage.total_tokens <= _MAX_TOTAL
            and (message.content is None or type(message.content) is str)
            and (message.reasoning is None or type(message.reasoning) is str)
            and type(message.tool_calls) is list
        ):
            calls = message.tool_calls
            for call in calls:  # a loop: a generator costs more than the tests
                if not (
                    type(call) is ToolCall
                    and type(call.id) is str
                    and call.id
                    and type(call.name) is str
                    and (type(call.arguments) is dict or type(call.arguments) is str)
                ):
                    break
            else:
                if len(calls) < 2 or len({call.id for call in calls}) == len(calls):
                    return response
    problem = _problem(response)
    if problem is None:
        return _with_own_ids(response)
    name = getattr(model, "name", None)
    shown = name if isinstance(name, str) else type(model).__name__
    raise ModelError(
        f"model {shown!r} of agent {agent!r} answered {problem}; a Model's complete() returns "
        "a ModelResponse whose message is an AssistantMessage",
        model=shown,
    )


def _with_own_ids(response: ModelResponse) -> ModelResponse:
    """`response`, or a copy whose repeated or empty tool-call ids are fresh ones."""
    calls = response.message.tool_calls
    taken: set[str] = set()
    mended = []
    for call in calls:
        call_id = own_id(call.id, taken)
        taken.add(call_id)
        mended.append(call if call_id == call.id else dataclasses.replace(call, id=call_id))
    if all(new is old for new, old in zip(mended, calls, strict=True)):
        return response
    message = dataclasses.replace(response.message, tool_calls=mended)
    return dataclasses.replace(response, message=message)


def _problem(response: Any) -> str | None:
    """What is wrong with the answer's shape, or None."""
    if not isinstance(response, ModelResponse):
        return f"{_kind(response)}, not a ModelResponse"
    message = response.message
    if not isinstance(message, AssistantMessage):
        return f"a ModelResponse whose message is {_kind(message)}"
    for field in ("content", "reasoning"):
        value = getattr(message, field)
        if value is not None and not isinstance(value, str):
            return f"a message whose {field} is {_kind(value)}, not text"
    calls = message.tool_calls
    if not isinstance(calls, list | tuple):
        return f"a message whose tool_calls is {_kind(calls)}, not a list"
    for index, call in enumerate(calls):
        problem = _call_problem(call)
        if problem is not None:
            return f"a message whose tool_calls[{index}] {problem}"
    usage = response.usage
    if not isinstance(usage, Usage):
        return f"a ModelResponse whose usage is {_kind(usage)}, not a Usage"
    for field in _COUNTS:
        value = getattr(usage, field)
        if type(value) is not int:
            return f"a usage whose {field} is {_kind(value)}, not an int"
        if not 0 <= value <= (_MAX_TOTAL if field == "total_tokens" else MAX_TOKEN_COUNT):
            shown = value if abs(value) < 10**50 else "a huge int"
            most = "2**54 - 2 (two counts)" if field == "total_tokens" else "2**53 - 1"
            return f"a usage whose {field} is {shown}, not a token count from 0 to {most}"
    cost = response.cost_usd
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        return f"a ModelResponse whose cost_usd is {_kind(cost)}, not a number"
    return None


def _call_problem(call: Any) -> str | None:
    if not isinstance(call, ToolCall):
        return f"is {_kind(call)}, not a ToolCall"
    if not isinstance(call.id, str):
        return f"has an id that is {_kind(call.id)}, not a string"
    if not isinstance(call.name, str):
        return f"has a name that is {_kind(call.name)}, not a string"
    if not isinstance(call.arguments, Mapping | str):
        return f"has arguments that are {_kind(call.arguments)}, not a JSON object or its text"
    return None


def _kind(value: Any) -> str:
    """A value as an error names it: its type only (the error may reach a served client, and
    a provider's response object may hold what it must not see)."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
