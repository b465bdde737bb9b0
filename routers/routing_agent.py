"""`routing_agent(model=...)`: an LLM that picks the next agent through tools.

The router asks its model, with tool use required, to call `select_agent(name, reason)` or
`done(summary)`. Its own requests and answers never enter the run's history: agents see only
each other's work, and `state.results` / `state.messages` hold agent calls alone.

Where AgentKit's default router hurts users, this one does not:
- a name that is not in the network goes back to the model as an error tool result naming
  the valid agents, up to `max_corrections` times, before the run fails with a `RoutingError`;
- a text reply instead of a tool call ends the run with `StopReason.ROUTER_TEXT` and the text
  as the summary, never silently;
- `done` ends it with `StopReason.ROUTER_DONE` and the model's summary.

The router asks with `tool_choice="required"`. A server that refuses it (llama.cpp's answers
500) gets the request again with `"auto"` from the model client (`agents.models._tool_choice`);
a text reply to such a relaxed request is corrected (`max_corrections`) before it counts.

After an agent call that handed off (`Agent(handoffs=...)`), the router follows the handoff
without asking its model: the agent chose who goes next.

Only the first tool call of a reply counts (a router picks one step at a time). While agents
are queued (`ctx.stack`), the router returns None without asking its model, so the queue
drains first and no tokens are spent on a choice that would only join the queue.

The router's token usage counts in the run's usage totals, and is also added up on its own in
`ctx.engine.router_usage` (a `Usage`). Each of its requests is recorded in `ctx.engine.router_calls`
(usage limits and traces read them), and usage limits are checked before each: a run that
reached one stops with `StopReason.USAGE_LIMIT`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from agents.models._answer_shape import checked_answer
from agents.models._calls import failed_model_calls, model_calls
from agents.models.base import Model, ModelRequest, ModelResponse
from agents.models.registry import resolve_model
from network.capabilities.budgets.metered import metered
from network.errors import ConfigurationError, ModelError, RoutingError
from network.history.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from network.history.model_answer import answer_of
from network.logger import get_logger
from network.numbers import check_number
from network.run.context import NetworkLike, RunContext
from network.run.events import Custom
from network.run.result import Stop, StopReason
from routers.routing_prompt import CHOOSE_NOW, DEFAULT_PREAMBLE, routing_system_prompt
from routers.routing_tools import BadChoice, Choice, read_call, tool_schemas

ASK_TOOL = "Answer by calling `select_agent` or `done`, not with text."


class RoutingAgent:
    """An LLM router choosing through `select_agent(name, reason)` / `done(summary)`; see the
    module docstring. `routing_agent(...)` is the same.

    Args:
        model: a litellm model string or a `Model`; defaults to the network's default_model.
        system: the router's instructions (a string, or a sync/async function of the run
            context); the agent list, the task and the history summary are always appended.
        max_corrections: how many times an unknown agent name (or invalid call) is sent back
            to the model to fix before the run fails with `RoutingError`.
        name: the router's name in requests and logs.
        history_limit: how many of the latest messages the history summary shows.
        params: extra model parameters (temperature, ...).
    """

    kind = "routing_agent"

    def __init__(
        self,
        model: Any = None,
        *,
        system: str | Callable[[RunContext], Any] | None = None,
        max_corrections: int = 2,
        name: str = "router",
        history_limit: int = 20,
        params: dict[str, Any] | None = None,
    ) -> None:
        if system is not None and not isinstance(system, str) and not callable(system):
            raise ConfigurationError(f"routing agent {name!r}: system must be a string or function")
        check_number(f"routing agent {name!r}: max_corrections", max_corrections, integer=True)
        check_number(
            f"routing agent {name!r}: history_limit", history_limit, integer=True, minimum=1
        )
        if isinstance(model, str) and not model:
            raise ConfigurationError(f"routing agent {name!r}: empty model name")
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(
                f"routing agent: name must be a non-empty string, got {name!r}"
            )
        if params is not None and not (
            isinstance(params, dict) and all(isinstance(key, str) for key in params)
        ):
            raise ConfigurationError(
                f"routing agent {name!r}: params must be a dict of parameter names, got {params!r}"
            )
        self.model = model
        self.system = system
        self.max_corrections = max_corrections
        self.name = name
        self.history_limit = history_limit
        self.params = dict(params or {})

    def validate(self, network: NetworkLike) -> None:
        """Fail at `Network(...)` time, not mid-run, when there is no model to ask."""
        model = self.model if self.model is not None else network.default_model
        if model is None:
            raise ConfigurationError(
                f"routing agent {self.name!r} has no model and network {network.name!r} "
                "has no default_model"
            )
        if not isinstance(model, str):  # a string is resolved on first use (litellm is slow)
            resolve_model(model)

    async def __call__(self, ctx: RunContext) -> Any:
        """The next agent's name, a `Stop`, or None while agents are queued."""
        if ctx.stack:
            return None
        handoff = ctx.handoff
        if handoff is not None:  # the agent chose: no tokens spent choosing again
            return handoff.target
        network = ctx.network
        model = resolve_model(self.model if self.model is not None else network.default_model)
        if ctx.engine.budget_accounts:  # shared budgets: each request reserves first, settles after
            model = metered(ctx.engine.budget_accounts, model)
        system = SystemMessage(await self._prompt(ctx))
        history: list[Any] = [UserMessage(CHOOSE_NOW)]
        tools = tool_schemas(list(network.agents))
        bad_names: list[str] = []
        last_error = ""
        for attempt in range(self.max_corrections + 1):
            budget = ctx.engine.budget  # usage limits are checked before each model request
            if budget is not None and budget.check(ctx) is not None:
                return Stop(StopReason.USAGE_LIMIT)
            request = ModelRequest(
                system=[system],
                history=list(history),  # each request keeps its own list, as it was sent
                tools=tools,
                tool_choice="required",
                agent=self.name,
                params=self.params,
            )
            response = await self._ask(ctx, model, request)
            message = response.message
            if not message.tool_calls:
                if response.tool_choice_relaxed and attempt < self.max_corrections:
                    # The server would not force a tool call, so a text reply may just be a
                    # small model ignoring the tools: ask once more before taking it as final.
                    _log(ctx, "router.corrected", router=self.name, attempt=attempt, error=ASK_TOOL)
                    history += [message, UserMessage(ASK_TOOL)]
                    continue
                _log(ctx, "router.text", router=self.name)
                return Stop(StopReason.ROUTER_TEXT, message.content or None)
            try:
                choice = read_call(message.tool_calls[0], network.agents)
            except BadChoice as problem:
                last_error = str(problem)
                if problem.agent is not None:
                    bad_names.append(problem.agent)
                _log(ctx, "router.corrected", router=self.name, attempt=attempt, error=last_error)
                history += [message, *_error_results(message, last_error)]
                continue
            if ctx.engine.emitter.active:
                await ctx.engine.emitter.emit(choice_event(self.name, choice))
            return self._act(ctx, choice)
        raise self._give_up(network, bad_names, last_error)

    async def _ask(self, ctx: RunContext, model: Model, request: ModelRequest) -> ModelResponse:
        """One model request, recorded on the run whether it is answered or fails: its
        calls (the trace shows each attempt) and its usage (the run's totals include what
        routing cost)."""
        requested_at, requested = time.time(), time.perf_counter()
        try:
            response = checked_answer(await answer_of(model, self.name, request), model, self.name)
        except Exception as error:  # a ModelError, or a model's own exception
            if isinstance(error, ModelError) and error.model is None:
                error.model = getattr(model, "name", None)
            # Recorded like an answered request: the trace shows each failed attempt.
            failed = failed_model_calls(model, self.name, error, requested_at, requested)
            ctx.engine.router_calls = (*ctx.engine.router_calls, *failed)
            raise
        calls = model_calls(model, self.name, response, requested_at, requested)
        ctx.engine.router_calls = (*ctx.engine.router_calls, *calls)
        spent = ctx.engine.router_usage
        ctx.engine.router_usage = response.usage if spent is None else spent + response.usage
        ctx.add_usage(response.usage)
        return response

    def _act(self, ctx: RunContext, choice: Choice) -> Any:
        if choice.agent is None:
            _log(ctx, "router.done", router=self.name)
            return Stop(StopReason.ROUTER_DONE, choice.summary)
        _log(ctx, "router.chose", router=self.name, agent=choice.agent, reason=choice.reason)
        return choice.agent

    async def _prompt(self, ctx: RunContext) -> str:
        preamble: Any = self.system if self.system is not None else DEFAULT_PREAMBLE
        if callable(preamble):
            preamble = preamble(ctx)
            if inspect.isawaitable(preamble):
                preamble = await preamble
        return routing_system_prompt(
            str(preamble or ""),
            ctx.network.agents,
            ctx.input,
            ctx.state.messages,
            limit=self.history_limit,
        )

    def _give_up(self, network: NetworkLike, bad_names: list[str], last_error: str) -> RoutingError:
        tries = self.max_corrections + 1
        if bad_names:
            return RoutingError(
                f"routing agent {self.name!r} chose agent {bad_names[-1]!r}, which is not in "
                f"network {network.name!r} (agents: {', '.join(network.agents)}); "
                f"{tries} attempts named {', '.join(repr(n) for n in bad_names)}",
                agent=bad_names[-1],
            )
        return RoutingError(
            f"routing agent {self.name!r} made no valid choice in {tries} attempts: {last_error}"
        )

    def __repr__(self) -> str:
        return f"RoutingAgent({self.name!r}, model={self.model!r})"


routing_agent = RoutingAgent
"""`routing_agent(model, ...)`: a `RoutingAgent`, in the spelling the docs use."""


def _error_results(message: AssistantMessage, error: str) -> list[ToolMessage]:
    """A tool result for every call of the reply: providers reject a call left unanswered."""
    results = []
    for index, call in enumerate(message.tool_calls):
        content = f"Error: {error}" if index == 0 else "Ignored: only the first call counts."
        results.append(ToolMessage(call.id, content, name=call.name, is_error=index == 0))
    return results


ROUTER_CHOICE_EVENT = "agent_network.router_choice"
"""The CUSTOM event a routing agent emits for each choice (the CLI trace prints it)."""


def choice_event(router: str, choice: Choice) -> Any:
    """CUSTOM `agent_network.router_choice`: `{router, agent, reason}` or `{router, summary}`."""
    if choice.agent is None:
        return Custom(ROUTER_CHOICE_EVENT, {"router": router, "summary": choice.summary})
    value = {"router": router, "agent": choice.agent, "reason": choice.reason}
    return Custom(ROUTER_CHOICE_EVENT, value)


def _log(ctx: RunContext, event: str, **fields: Any) -> None:
    """A line for the run's log (silent unless the application turned logging on).

    Choices are INFO, like the run's `agent.started` lines; a correction is a WARNING, since it
    means the model named an agent that does not exist.
    """
    log = get_logger()
    write = log.warning if event == "router.corrected" else log.info
    write(event, run_id=ctx.run_id, network=ctx.network.name, **fields)
