"""What a replay reads of a recorded thread: its runs, each one's calls and answers.

A thread already keeps what a replay needs, so nothing is recorded for it: each agent call's
`InferenceResult` holds the model's answer (`output`, and `answers` when the call asked more
than once or a capability changed the answer: text, tool calls, reasoning), its usage and raw
response, the tools offered (`offered_tools`), every tool call's record (`tool_calls`), the
state it wrote (`state_delta`, and who wrote which key: `writes`), and the run it belongs to
(`run_id`). The router's choices are the sequence of agent calls.

Decisions: a new run starts where the conversation a call saw is longer than what the calls
before it left (the run's user message came in), or at a call that only holds the tool calls
a person's answer resumed; the branches of one fan-out all saw the conversation as it was at
the fork. A run that made no agent call left nothing to replay. A run's input is its calls'
`input`; the state its caller gave (`state=`) is what the run's first call committed on the
caller's behalf (its `writes` whose source is "caller", with the values its `state_delta`
holds); its id, the one its writes carry, when it wrote any.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from network.errors import ConfigurationError
from network.history.messages import AssistantMessage
from network.history.model_io import ModelResponse
from network.history.results import InferenceResult, Usage


@dataclass(slots=True)
class RecordedTurn:
    """One recorded run of a thread: its input, its caller's state and its agent calls.

    Attributes:
        run_id: the run's id (None for calls of a run that was never committed).
        input: the user's message the run answered.
        state: the keys its caller set (`state=`), as JSON values.
        calls: its agent calls, in order.
    """

    run_id: str | None
    input: str
    state: dict[str, Any] = field(default_factory=dict)
    calls: list[InferenceResult] = field(default_factory=list)


def recorded_turns(results: Sequence[InferenceResult]) -> list[RecordedTurn]:
    """The runs of a thread (or of one run's results), in order: see the module docstring."""
    turns: list[RecordedTurn] = []
    expected = -1  # the conversation's length the run's next call would see
    fork: tuple[str, int] | None = None  # a fan-out under way: its name, its history's length
    for result in results:
        length = len(result.history)
        branch = result.branch
        in_fork = branch is not None and fork is not None and branch.split("/")[0] == fork[0]
        if in_fork:
            assert fork is not None
            length = fork[1]  # every branch saw the conversation as it was at the fork
        elif branch is not None:
            fork = (branch.split("/")[0], length)
        else:
            fork = None
        if not turns or (not in_fork and length != expected) or resumed(result):
            turns.append(RecordedTurn(None, result.input, caller_state(result)))
            expected = length
        turns[-1].calls.append(result)
        expected += len(result.messages())
        if turns[-1].run_id is None:
            turns[-1].run_id = next((w.run_id for w in result.writes if w.run_id), None)
    if not turns:
        raise ConfigurationError("nothing to replay: the recording holds no agent call")
    return turns


def resumed(result: InferenceResult) -> bool:
    """Whether `result` records tool calls a person's answer resumed (a run that continued a
    stopped one): it has tool calls and no answer, and was not skipped."""
    return (
        not result.output
        and not result.skipped
        and result.error is None
        and bool(result.tool_calls)
    )


def caller_state(result: InferenceResult) -> dict[str, Any]:
    """The keys the caller wrote before the call (`state=` of its run), as JSON values."""
    keys = {write.key for write in result.writes if write.source == "caller"}
    values: dict[str, Any] = {}
    for op in result.state_delta:
        parts = pointer_parts(op.get("path", ""))
        if len(parts) != 1 or parts[0] not in keys:
            continue
        if op.get("op") == "remove":
            values.pop(parts[0], None)
        else:
            values[parts[0]] = copy.deepcopy(op.get("value"))
    return values


def pointer_parts(path: str) -> list[str]:
    """The unescaped parts of an RFC 6901 pointer (`/a~1b/-` is `["a/b", "-"]`)."""
    if not path.startswith("/"):
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def recorded_answers(result: InferenceResult) -> list[AssistantMessage]:
    """The model's answers to the call's requests, in order, as it gave them."""
    if result.answers:
        return list(result.answers)
    return [message for message in result.output[:1] if isinstance(message, AssistantMessage)]


def answer_response(result: InferenceResult, index: int) -> ModelResponse | None:
    """The recorded answer to request `index` of the call as a `ModelResponse` (a copy: the
    step names it and may change it), or None when the recording holds no such answer.

    Usage: the request's own when the call recorded its requests (`model_calls`), else the
    call's total on its last answer."""
    answers = recorded_answers(result)
    if index >= len(answers):
        return None
    message = copy.deepcopy(answers[index])
    last = index == len(answers) - 1
    answered = [call for call in result.model_calls if call.error is None]
    if len(answered) == len(answers):
        usage, finish = answered[index].usage, answered[index].finish_reason
        model = answered[index].response_model
    else:
        usage, finish, model = (result.usage if last else Usage()), None, None
    return ModelResponse(message, usage, result.raw if last else None, finish, False, model)
