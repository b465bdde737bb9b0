"""`RemoteContext`: which remote A2A context an agent call continues.

An agent whose model is an `A2AModel` (`agents.models.a2a`) gets this capability from
`Agent`: before each model request it names the remote `contextId` the call continues, one
per thread (per run, for a run on no thread, or a sub-run of `agent.as_tool()`) and agent
(and branch, in a fan-out: `remote_context`), so a remote agent in a team keeps its
conversation across a thread's turns, from any process (the id is derived from the thread's
id, the agent's name and the branch's id, and kept nowhere). A remote
server scopes its contexts by its own callers (A2A servers do, by their authentication).

A remote task that waits for input is an interrupt of the calling run, and the answer goes
to that same task (`agents.capabilities.remote_a2a.input_required`): the `answer` stage raises
the interrupt, `resume_calls` gives each waiting task's answer a call of its own (two branches
of a fan-out that both wait are two tasks), `wrap_resume` takes up that answer with the call,
and `wrap_model` hands the call its reply.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from agents.capabilities.remote_a2a.input_required import (
    continue_remote,
    interrupt_of,
    one_task_a_call,
    take_reply,
    waits_remotely,
)
from agents.models.a2a import CONTEXT_PARAM, REPLY_PARAM
from network.history.model_io import ModelRequest, ModelResponse
from network.history.results import InferenceResult
from network.run.agent_call import AgentCall
from network.run.capability import Capability, ModelProceed, ResumeProceed
from network.run.context import RunContext
from network.run.interrupts import Answer, Interrupt

_NAMESPACE = uuid.UUID("5b1d8f3e-6a0c-4c8e-9a51-0f2d7c3e9b14")


def remote_context(run: RunContext, agent: str) -> str:
    """The remote `contextId` a call of `agent` in `run` continues: one per thread (or run)
    and agent, and per branch of a fan-out (`Parallel`): branches run side by side, and a
    remote context has one task at a time, so each branch keeps a conversation of its own
    (stable across the thread's turns: a branch id is)."""
    owner = run.thread_id or run.run_id
    key = f"{owner}/{agent}" if run.branch is None else f"{owner}/{agent}/{run.branch.id}"
    return uuid.uuid5(_NAMESPACE, key).hex


class RemoteContext(Capability):
    """Names the remote A2A context of each call (see the module docstring)."""

    async def wrap_model(
        self, call: AgentCall, request: ModelRequest, proceed: ModelProceed
    ) -> ModelResponse:
        run = call.run
        params = {**request.params, CONTEXT_PARAM: remote_context(run, call.agent.name)}
        reply = take_reply(run, call.agent.name)
        if reply is not None:  # a person answered the remote's waiting task: send it there
            params[REPLY_PARAM] = reply
        return await proceed(replace(request, params=params))

    async def answer(self, call: AgentCall, response: ModelResponse) -> ModelResponse:
        """A remote task waiting for input stops the run on an interrupt."""
        interrupt = interrupt_of(call.agent.name, response)
        if interrupt is not None:
            run = call.run
            run.engine.interrupts = (*run.engine.interrupts, interrupt)
        return response

    def resume_calls(
        self, run: RunContext, calls: list[list[tuple[Interrupt, Answer]]]
    ) -> list[list[tuple[Interrupt, Answer]]]:
        """One call for each remote task waiting for input (a call sends one reply to one
        task), before the rest of each call (`one_task_a_call`)."""
        return [split for answered in calls for split in one_task_a_call(answered)]

    async def wrap_resume(
        self, run: RunContext, answered: list[tuple[Interrupt, Answer]], proceed: ResumeProceed
    ) -> InferenceResult:
        """The answer to a remote task waiting for input goes to that task, in one call of
        the agent (`continue_remote`); any other answers are taken up as usual."""
        if answered and waits_remotely(answered[0][0]) and run.agent is not None:
            return await continue_remote(run.agent, run, answered)
        return await proceed(answered)
