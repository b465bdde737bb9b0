"""What a replay reads of a recorded thread's calls: the model's answers, as it gave them.

A thread already keeps what a replay needs, so nothing is recorded for it: each agent call's
`InferenceResult` holds the model's answer (`output`, and `answers` when the call asked more
than once or a capability changed the answer: text, tool calls, reasoning), its usage and raw
response, the tools offered (`offered_tools`), every tool call's record (`tool_calls`), the
state it wrote (`state_delta`, and who wrote which key: `writes`), and the run it belongs to
(`run_id`). The router's choices are the sequence of agent calls. The thread's runs are read
back by `network.threads.recorded_runs`.
"""

from __future__ import annotations

import copy

from network.history.messages import AssistantMessage
from network.history.model_io import ModelResponse
from network.history.results import InferenceResult, Usage
from network.threads.recorded_runs import (
    RecordedTurn,
    caller_state,
    pointer_parts,
    recorded_turns,
    resumed,
)

__all__ = [
    "RecordedTurn",
    "answer_response",
    "caller_state",
    "pointer_parts",
    "recorded_answers",
    "recorded_turns",
    "resumed",
]


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
