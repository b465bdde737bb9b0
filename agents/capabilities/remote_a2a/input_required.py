"""A remote A2A agent's `input-required`, answered the way an approval is answered here.

When the remote task of an `A2AModel` call goes to `input-required` (a question, or the
approvals `agent-network serve --a2a` waits on), the call's answer says so
(`finish_reason="input_required"`). `interrupt_of` makes it an `Interrupt` of the calling run,
so the run stops with `StopReason.INTERRUPTED` as on a tool that waits for a person: the
interrupt's `reason` and `tool` are `REMOTE_INPUT`, its `message` the remote's question, its
`tool_call_id` the remote task's id, its `arguments` `{"task_id", "context_id", "question",
"asked"}` (`asked`: the status message's data parts, as JSON; our server's
`{"interrupts": [...]}` among them). On a thread it is a pending call like any other.

The answer (`network.resume(result, [...])`, AG-UI's `resume`, A2A's `answers`, from any
process) is claimed exactly once by the usual path; then the agent's resumption
(`continue_remote`) makes one call of the agent per waiting task (`one_task_a_call`, the
capability's `resume_calls` stage: two branches of a fan-out that both wait are two tasks,
continued one after the other), whose
model request carries the reply (`agents.models.a2a.REPLY_PARAM`), which `A2AModel` sends
to the same remote task (same `taskId` and `contextId`) instead of a new turn. That call is
an ordinary agent call: its answer is the remote's, it streams and counts as any; a remote
that asks again is another interrupt. What is sent:

- `interrupt.respond(value)`: `value` itself (a string as a text part, anything else as a
  JSON data part): the answer to a free-form question, or `{"answers": [...]}` for each of
  the remote's approvals one by one. What A2A cannot carry is sent as a model reads it: a
  lone surrogate as U+FFFD, NaN and infinity as the strings "NaN", "Infinity";
- `interrupt.accept()` / `interrupt.reject(reason)`: to a remote that listed its approvals
  (`{"interrupts": [{"id", ...}]}`), a data part `{"answers": [{"interrupt": id, "approved",
  "reason"?}]}` approving or rejecting each; to any other, `{"approved", "reason"?}`. Edited
  arguments (`accept(arguments=...)`) are refused before anything is claimed, as for a call
  whose tool is not the agent's (use `respond`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from network.errors import ModelError
from network.history.model_io import ModelResponse
from network.history.results import InferenceResult
from network.run.context import RunContext
from network.run.interrupts import Answer, Interrupt, InterruptError
from network.utf8 import utf8_json

REMOTE_INPUT = "a2a_input_required"
"""The `reason` (and `tool`) of the interrupt a remote A2A task waiting for input raises."""

MAX_QUESTION_CHARS = 2_000  # of a remote's question, in the interrupt's message


class _Replies:
    """The key of the replies a run's resumption hands its remote agents' next call
    (`RunContext.local`): agent name -> the reply (`REPLY_PARAM`'s value)."""


class CallableAgent(Protocol):
    """An agent whose call is the agent step (`agents.Agent`)."""

    name: str

    async def call(self, ctx: RunContext) -> InferenceResult: ...


def interrupt_of(agent: str, response: ModelResponse) -> Interrupt | None:
    """The interrupt a remote task waiting for input raises, from `agent`'s answer; None for
    any other answer (or one naming no task, which cannot be continued)."""
    raw = response.raw
    if response.finish_reason != "input_required" or not isinstance(raw, dict):
        return None
    task_id, context_id = raw.get("task_id"), raw.get("context_id")
    if not isinstance(task_id, str) or not task_id or not isinstance(context_id, str):
        return None
    question = str(response.message.content or "")
    if len(question) > MAX_QUESTION_CHARS:
        question = question[:MAX_QUESTION_CHARS] + "..."
    asked = raw.get("asked")
    return Interrupt(
        reason=REMOTE_INPUT,
        message=question or f"remote agent {agent!r} waits for input",
        tool_call_id=task_id,
        tool=REMOTE_INPUT,
        agent=agent,
        arguments={
            "task_id": task_id,
            "context_id": context_id,
            "question": question,
            "asked": asked if isinstance(asked, list) else [],
        },
    )


def waits_remotely(interrupt: Interrupt) -> bool:
    """Whether `interrupt` is a remote task of this agent's waiting for input (not one raised
    inside a sub-run, which carries the same reason: that sub-run answers it)."""
    return interrupt.reason == REMOTE_INPUT and interrupt.nested is None


def one_task_a_call(
    answered: list[tuple[Interrupt, Answer]],
) -> list[list[tuple[Interrupt, Answer]]]:
    """The agent calls that continue `answered`: one for each remote task waiting for input
    (a call sends one reply to one task: two branches of a fan-out each left their own), in
    the order they were pending, then one for the rest (tool calls that waited for a
    person)."""
    remote = [[pair] for pair in answered if waits_remotely(pair[0])]
    rest = [pair for pair in answered if not waits_remotely(pair[0])]
    return remote + ([rest] if rest else [])


def remote_approvals(asked: Any) -> list[str]:
    """The ids of the approvals a remote listed (`{"interrupts": [{"id": ...}]}` data parts)."""
    ids: list[str] = []
    for data in asked if isinstance(asked, list) else ():
        waiting = data.get("interrupts") if isinstance(data, dict) else None
        for entry in waiting if isinstance(waiting, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"]:
                ids.append(entry["id"])
    return ids


def reply_of(interrupt: Interrupt, answer: Answer) -> dict[str, Any]:
    """What `answer` sends to the remote task `interrupt` stands for (`REPLY_PARAM`'s value;
    see the module docstring)."""
    arguments = interrupt.arguments if isinstance(interrupt.arguments, dict) else {}
    task_id, context_id = arguments.get("task_id"), arguments.get("context_id")
    if not isinstance(task_id, str) or not task_id or not isinstance(context_id, str):
        raise InterruptError(f"interrupt {interrupt.id!r} names no remote A2A task to answer")
    parts: list[dict[str, Any]]
    if answer.responded:
        value = answer.response
        if isinstance(value, str):
            parts = [{"text": value}]
        else:  # JSON, as a responded call's result is (anything else as its text); NaN and
            # infinity (respond() refuses them; an answer recorded before it did may hold
            # them), which A2A's JSON has no number for, as the words a model reads
            parts = [{"data": json.loads(json.dumps(value, default=str), parse_constant=str)}]
    else:
        said = {"reason": answer.reason} if answer.reason is not None else {}
        approvals = remote_approvals(arguments.get("asked"))
        if approvals:
            entries = [{"interrupt": id_, "approved": answer.approved, **said} for id_ in approvals]
            parts = [{"data": {"answers": entries}}]
        else:
            parts = [{"data": {"approved": answer.approved, **said}}]
    # A lone surrogate has no UTF-8 form: the message could not be encoded, and the call
    # failed after the answer was claimed, blaming the remote ("sent what is not A2A").
    return {"task_id": task_id, "context_id": context_id, "parts": utf8_json(parts)}


def take_reply(run: RunContext, agent: str) -> dict[str, Any] | None:
    """The reply this call of `agent` sends, if its run's resumption left one (taken: the
    agent's later calls send new turns)."""
    replies: dict[str, dict[str, Any]] = run.local(_Replies, dict)
    return replies.pop(agent, None)


async def continue_remote(
    agent: CallableAgent, ctx: RunContext, answered: list[tuple[Interrupt, Answer]]
) -> InferenceResult:
    """The resumption of `agent`'s remote task waiting for input: one call of the agent that
    sends the answer to that task (see the module docstring)."""
    if len(answered) != 1 or not waits_remotely(answered[0][0]):
        raise ModelError(
            f"agent {agent.name!r}: a remote A2A agent continues one waiting task per call, "
            f"got {len(answered)} answers",
            model=agent.name,
        )
    interrupt, answer = answered[0]
    replies: dict[str, dict[str, Any]] = ctx.local(_Replies, dict)
    replies[agent.name] = reply_of(interrupt, answer)
    try:
        return await agent.call(ctx)
    finally:
        take_reply(ctx, agent.name)  # never sent by a later call, whatever happened


__all__ = [
    "REMOTE_INPUT",
    "continue_remote",
    "interrupt_of",
    "one_task_a_call",
    "remote_approvals",
    "reply_of",
    "take_reply",
    "waits_remotely",
]
