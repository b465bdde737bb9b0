"""`Agent`: instructions, tools and a model, run by a network or on its own.

Inside a network, one agent call is one model inference plus the tool calls it asked for; the
router decides whether the agent runs again to read its tools' results. On its own,
`await agent.run(input)` loops inference -> tools until the model answers in text or
`max_steps` is reached, every request carrying the previous tools' results.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, cast

from agents.context._template import Template
from agents.context.policy import compact_request
from agents.guardrails._agent import AgentGuardrail
from agents.guardrails._stages import DueChecks, answer_checked, check_answer, checked_call
from agents.handoffs import HandoffTools, coerce_handoffs, handed_history, in_model_order
from agents.hooks import AgentCall, AgentHooks
from agents.mcp._offered import offered_tools
from agents.mcp.server import MCPServer
from agents.models._calls import failed_model_calls, model_calls
from agents.models._metered import metered
from agents.models.base import Model, ModelRequest
from agents.models.registry import resolve_model
from agents.output._spec import OutputSpec
from agents.tools._confirmation import hold, needs_confirmation, resume_call
from agents.tools._dispatch import run_tool_calls, start_tool_calls
from agents.tools._subrun import agent_network_of, answering, held_calls, subrun_tool
from agents.tools.client_tool import defer_client_calls
from agents.tools.tool import Tool
from agents.tools.tool import tool as make_tool
from network.deprecation import positional_arguments
from network.errors import ConfigurationError, ModelError
from network.history.fixed_list import NO_PROMPT, FixedList
from network.history.messages import SystemMessage, ToolCall
from network.history.results import InferenceResult, ModelCall, ToolCallRecord, Usage
from network.network import Network
from network.run.client_tools import ClientTool
from network.run.context import RunContext
from network.run.entry_points import blocking
from network.run.guardrails import Guardrail, coerce_guardrails
from network.run.limits import UsageLimits
from network.run.retry_policy import RetryPolicy
from network.run.subrun import SubrunTool, check_mapping
from network.run.tool_defaults import check_tool_defaults
from network.state.provenance import agent_writer

TOOL_CHOICES = ("auto", "required", "none")


_DEFAULTS: dict[str, Any] = {
    "description": "",
    "system": "",
    "tools": (),
    "model": None,
    "tool_choice": "auto",
    "output_key": None,
    "hooks": None,
    "params": None,
    "state_schema": None,
    "context_policy": None,
    "tool_timeout": None,
    "output_type": None,
    "output_mode": "auto",
    "output_retries": 2,
    "tool_retry": None,
}
_POSITIONAL = tuple(_DEFAULTS)  # the order the old positional spelling took them in


class Agent:
    """An LLM agent.

    Args:
        name: unique within a network; routers and logs use it.
        description: what the agent is for (the routing agent reads it).
        system: instructions: a string with `{key}` / `{key?}` placeholders filled from state
            (`{{` and `}}` for literal braces), or a sync/async function of the `RunContext`
            returning the text.
        tools: `@tool` functions (plain functions are wrapped with `@tool`), client tools,
            and `MCPServer`s, whose tools are listed when a run needs them (`agents.mcp`).
        model: a litellm model string (`"openai/gpt-4o-mini"`), a dict of `LiteLLMModel`
            arguments (`{"model": ..., "api_base": ...}`) or a `Model`; defaults to the
            network's `default_model`.
        tool_choice: "auto", "required", "none", or the name of one of the tools.
        output_key: the state key that receives the agent's final text.
        hooks: `AgentHooks` or a dict of `on_start` / `on_response` / `on_finish`.
        params: extra model parameters (temperature, max_tokens, ...).
        state_schema: not accepted (a `ConfigurationError` says where the schema goes).
        context_policy: a `ContextPolicy` bounding what each request sends (by messages and
            tokens, with an optional summariser); default: the network's `context_policy`.
        tool_timeout: seconds each tool call may take unless the tool sets its own `timeout`
            (default: the network's `tool_timeout`); see `@tool(timeout=...)`.
        output_type: makes the final answer a validated value of this type (a pydantic
            model, `list[...]`, a union, ...): `InferenceResult.output_value` holds it and
            `output_key` stores it through the key's type. See `agents.output`.
        output_mode: how the schema reaches the model: "auto" (ask the model), "native"
            (`response_format`), "tool" (a forced `final_output` tool) or "prompted".
        output_retries: how many times an answer that does not validate is asked again
            (with the errors) before `OutputValidationError`.
        tool_retry: the `RetryPolicy` of this agent's tool calls unless the tool sets its
            own `retry` (default: the network's `tool_retry`); see `@tool(retry=...)`.
        stream: True (the default): when the run has events to send (`network.stream`, an
            AG-UI server), the model is asked to stream and its deltas become events as they
            come. False: the model is never asked to stream; the answer is reported when it
            is whole (over AG-UI, the text as one delta). For servers that refuse streamed
            requests in some cases (llama.cpp's, with tools). Only this switch (and the
            model's own `stream=`) decides it: tracing or logging never does.
        input_guardrails: checks of the run's input at this agent's first call of a run,
            beside its model request (or before it, `blocking=True`): functions, agents with
            typed output or `Guardrail`s (`agents.guardrails`). A trip stops the run with
            stop reason "guardrail" and commits nothing of the call.
        output_guardrails: checks of each final answer, before it is committed and before
            `output_key` is written.
        handoffs: agents (or agents' names, or `handoff(agent, ...)`) this agent may hand the
            conversation to: the model is offered one `transfer_to_<name>` tool for each (see
            `agents.handoffs`). A list: items appended later are offered too (append before
            the `Network` is built: it reads them to choose its router, check and draw them).
    """

    def __init__(
        self,
        name: str,
        *positional: Any,
        description: str = "",
        system: str | Callable[[RunContext], Any] = "",
        tools: Sequence[Tool | ClientTool | MCPServer | Callable[..., Any]] = (),
        model: str | Model | None = None,
        tool_choice: str = "auto",
        output_key: str | None = None,
        hooks: AgentHooks | dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        state_schema: None = None,
        context_policy: Any = None,
        tool_timeout: float | None = None,
        output_type: Any = None,
        output_mode: str = "auto",
        output_retries: int = 2,
        tool_retry: RetryPolicy | None = None,
        stream: bool = True,
        input_guardrails: Sequence[Any] = (),
        output_guardrails: Sequence[Any] = (),
        handoffs: Sequence[Any] = (),
    ) -> None:
        if positional:  # the old spelling, `Agent(name, description, system, tools, model)`
            given = positional_arguments(
                f"Agent({name!r}, ...)",
                positional,
                _POSITIONAL,
                {
                    "description": description,
                    "system": system,
                    "tools": tools,
                    "model": model,
                    "tool_choice": tool_choice,
                    "output_key": output_key,
                    "hooks": hooks,
                    "params": params,
                    "state_schema": state_schema,
                    "context_policy": context_policy,
                    "tool_timeout": tool_timeout,
                    "output_type": output_type,
                    "output_mode": output_mode,
                    "output_retries": output_retries,
                    "tool_retry": tool_retry,
                },
                _DEFAULTS,
            )
            description, system, tools, model = (
                given["description"],
                given["system"],
                given["tools"],
                given["model"],
            )
            tool_choice, output_key, hooks, params = (
                given["tool_choice"],
                given["output_key"],
                given["hooks"],
                given["params"],
            )
            state_schema, context_policy, tool_timeout = (
                given["state_schema"],
                given["context_policy"],
                given["tool_timeout"],
            )
            output_type, output_mode, output_retries, tool_retry = (
                given["output_type"],
                given["output_mode"],
                given["output_retries"],
                given["tool_retry"],
            )
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"an agent needs a name, got {name!r}")
        if state_schema is not None:  # a common first guess; say where the schema goes
            raise ConfigurationError(
                f"agent {name!r}: an agent has no state schema; the state belongs to the "
                "network: `Network(..., state_schema=...)`, or `agent.run(input, "
                "state_schema=...)` for an agent run on its own"
            )
        self.name = name
        self.description = description
        self._last_prompt: tuple[str, FixedList] | None = None  # see `prompt`
        self.system = system  # checked, and its template made, by the property
        self.tools: dict[str, Tool] = {}
        self.client_tools: dict[str, ClientTool] = {}  # no function: see agents.tools.client_tool
        self.mcp_servers: list[MCPServer] = []  # their tools are known once a run lists them
        for item in tools:
            if isinstance(item, MCPServer):
                if any(item is known for known in self.mcp_servers):
                    raise ConfigurationError(f"agent {name!r}: MCP server {item!r} given twice")
                self.mcp_servers.append(item)
                continue
            wrapped = (
                item
                if isinstance(item, Tool | ClientTool)
                else subrun_tool(item)  # `network.as_tool(...)`
                if isinstance(item, SubrunTool)
                else make_tool(item)
            )
            if wrapped.name in self.tools or wrapped.name in self.client_tools:
                raise ConfigurationError(f"agent {name!r}: two tools are named {wrapped.name!r}")
            if isinstance(wrapped, ClientTool):
                self.client_tools[wrapped.name] = wrapped
            else:
                self.tools[wrapped.name] = wrapped
        if (
            tool_choice not in TOOL_CHOICES
            and tool_choice not in self.tools
            and tool_choice not in self.client_tools
            and not self.mcp_servers  # it may name an MCP tool, listed only in a run
        ):
            raise ConfigurationError(
                f"agent {name!r}: tool_choice {tool_choice!r} is not one of {TOOL_CHOICES} "
                f"nor a tool of this agent ({', '.join(self.tools) or 'none'})"
            )
        self.model = model  # checked by the property
        self.tool_choice = tool_choice
        self.output_key = output_key
        self.hooks = AgentHooks.coerce(hooks)
        self.params = dict(params or {})
        self.context_policy = context_policy
        check_tool_defaults(f"agent {name!r}", tool_timeout, tool_retry)
        self.tool_timeout = tool_timeout
        self.tool_retry = tool_retry
        if not isinstance(stream, bool):
            raise ConfigurationError(
                f"agent {name!r}: stream must be True or False, got {stream!r}"
            )
        self.stream = stream
        self.output_type = output_type
        self.output: OutputSpec | None = (
            None
            if output_type is None
            else OutputSpec(name, output_type, output_mode, output_retries)
        )
        self.input_guardrails = coerce_guardrails(f"agent {name!r}", "input", input_guardrails)
        self.output_guardrails = coerce_guardrails(f"agent {name!r}", "output", output_guardrails)
        # One flag read per call: an agent without guardrails does nothing more than before.
        # A tool's guardrails count: their trip too must undo everything the call wrote.
        self._guarded = bool(
            self.input_guardrails
            or self.output_guardrails
            or any(t.guardrails is not None for t in self.tools.values())
        )
        self._tool_schemas = [t.schema for t in self.tools.values()]
        self._tool_schemas += [t.schema for t in self.client_tools.values()]
        # Whether any tool waits for a person; saves looking at every call when none does.
        self.confirming = any(t.requires_confirmation for t in self.tools.values())
        self.handoffs: list[Any] = coerce_handoffs(name, handoffs)
        self._handoff_tools: HandoffTools | None = None
        if self.handoffs:
            self.handoff_tools()  # a clash of tool names is an error here, not mid-run

    # -- handoffs --------------------------------------------------------------------------

    def handoff_tools(self) -> HandoffTools:
        """The `transfer_to_...` tools of `handoffs` as the list is now (rebuilt when items
        were added or removed since the last call)."""
        built = self._handoff_tools
        if built is None or built.key != tuple(id(item) for item in self.handoffs):
            taken = [*self.tools, *self.client_tools]
            built = self._handoff_tools = HandoffTools(self.name, self.handoffs, taken)
        return built

    @property
    def handoff_targets(self) -> tuple[str, ...]:
        """The names of the agents this one may hand off to (what networks check and draw)."""
        return tuple(spec.target for spec in self.handoff_tools().by_tool.values())

    # -- what a call reads, prepared when it is set --------------------------------------

    @property
    def system(self) -> str | Callable[[RunContext], Any]:
        """The instructions: a template string, or a function of the run context."""
        return self._system

    @system.setter
    def system(self, system: str | Callable[[RunContext], Any]) -> None:
        template = Template(system) if isinstance(system, str) else None
        if template is None and not callable(system):
            raise ConfigurationError(f"agent {self.name!r}: system must be a string or a function")
        self._system, self._template = system, template
        # Instructions without placeholders are the same on every call: their prompt is made
        # once, here, by the prompt stage itself.
        self._fixed_text = template.static_text if template is not None else None
        self._fixed_prompt = self.prompt(self._fixed_text) if self._fixed_text is not None else None

    @property
    def model(self) -> str | dict[str, Any] | Model | None:
        """The model: a litellm model string, a dict of `LiteLLMModel` arguments, a `Model`,
        or None for the network's `default_model`."""
        return self._model

    @model.setter
    def model(self, model: str | dict[str, Any] | Model | None) -> None:
        if isinstance(model, str) and not model:
            raise ConfigurationError(f"agent {self.name!r}: empty model name")
        self._model = model
        # A model object is used as it is: `resolve_model` is asked only for a name.
        named = model is None or type(model) is str or type(model) is dict
        self._model_object: Model | None = None if named else cast(Model, model)

    # -- one call inside a network -------------------------------------------------------
    #
    # An agent call runs in stages, each written once and shared by every call: the
    # instructions (`instructions`), the prompt (`prompt`), the hooks' start (`_start_hooks`),
    # the model (`resolve_model`), the request (`request`), the model call (in `call` itself:
    # the model's coroutine is awaited right there, so a step awaits the model through no frame
    # of its own), the answer (`_answer`), the tool calls (`_run_tools`), the output
    # (`_write_output`) and the record (`_result`). An agent with guardrails (or in a network
    # with some) runs three more (`agents.guardrails._stages`): the call inside a savepoint a
    # trip rolls back (`checked_call`), the model call beside the input guardrails (`_ask`,
    # `answer_checked`) and the output guardrails on a final answer (`check_answer`).

    async def instructions(self, ctx: RunContext) -> str:
        """The system text for this call, rendered from state."""
        text = self._static_instructions(ctx)
        return text if text is not None else await self._dynamic_instructions(ctx)

    def _static_instructions(self, ctx: RunContext) -> str | None:
        """The instructions of a template (rendered from state), or None for a function's."""
        template = self._template
        if template is None:
            return None
        text = template.static_text  # a template without placeholders: the same every call
        return text if text is not None else template.render(ctx.state.kv, self.name)

    async def _dynamic_instructions(self, ctx: RunContext) -> str:
        text = self.system(ctx)  # type: ignore[operator]
        if inspect.isawaitable(text):
            text = await text
        return "" if text is None else str(text)

    def prompt(self, text: str | None) -> list[Any]:
        """The system messages of a call sent with instructions `text`: one `FixedList`
        shared by the calls that send the same text (see `network.history.fixed_list`)."""
        if not text:
            return NO_PROMPT
        last = self._last_prompt
        if last is not None and (last[0] is text or last[0] == text):
            return last[1]
        prompt = FixedList([SystemMessage(text)])
        self._last_prompt = (text, prompt)
        return prompt

    def resolve_model(self, ctx: RunContext) -> Model:
        """This agent's model, else the network's default model."""
        if self._model_object is not None:
            return self._model_object
        model: Any = self._model
        if model is None:
            model = ctx.network.default_model
        if model is None:
            raise ConfigurationError(
                f"agent {self.name!r} has no model and network {ctx.network.name!r} "
                "has no default_model"
            )
        return cast(Model, resolve_model(model))

    async def _offered_tools(self, ctx: RunContext) -> tuple[dict[str, Tool], list[Any]]:
        """The tools offered on this call and their schemas: the agent's own, its MCP
        servers' (listed on the run's connection), then the tools the caller declared."""
        tools, schemas = self.tools, self._tool_schemas
        if self.mcp_servers:  # listed on the run's (or a held) connection, cached there
            tools = await offered_tools(ctx, self.name, self.tools, self.mcp_servers)
            schemas = [t.schema for t in tools.values()]
            schemas += [t.schema for t in self.client_tools.values()]
        if ctx.client_tools:  # declared by the caller for this run (an AG-UI client's tools)
            schemas = schemas + [t.schema for t in ctx.client_tools if t.name not in tools]
        return tools, schemas

    async def call(self, ctx: RunContext, checks: DueChecks | None = None) -> InferenceResult:
        """One inference plus its tool calls; returns what history keeps.

        With guardrails (the agent's or the network's), the call runs inside
        `agents.guardrails._stages.checked_call`, which calls back with the `checks` due.
        (Positional, not keyword-only: a keyword-only default costs a dict lookup per step.)"""
        if checks is None and (self._guarded or getattr(ctx.network, "guarded", False)):
            return await checked_call(self, ctx)
        started_at = time.time()
        started = time.perf_counter()
        prompt = self._fixed_prompt
        text = self._fixed_text
        if prompt is None:  # instructions rendered from state, or a function's
            text = self._static_instructions(ctx)
            if text is None:
                text = await self._dynamic_instructions(ctx)
            prompt = self.prompt(text)
        history: Any = ctx.state.history()  # a hook may swap in any sequence
        if ctx.last_result is not None and getattr(ctx.network, "handoff_edges", None):
            history = await handed_history(self, ctx, history)  # a handoff's input_filter
        # The hooks' view of the call, made only for an agent with hooks: it would otherwise
        # be one more object per step living across the model's answer.
        hooked = None
        hooks = self.hooks
        if hooks.on_start is not None or hooks.on_response is not None or hooks.on_finish:
            hooked = await self._start_hooks(ctx, text, history)
            prompt, history = hooked.prompt, hooked.history
            if hooked.skip:
                return self._result(ctx, prompt, history, None, [], started_at, started, ())
        model = self._model_object or self.resolve_model(ctx)
        system, sent = prompt, history
        policy = self.context_policy or getattr(ctx.network, "context_policy", None)
        if policy is not None:  # bounds what is sent; the history recorded stays whole
            system, sent = await compact_request(policy, ctx, self.name, model, system, sent)
        if self.mcp_servers or ctx.client_tools:
            tools, schemas = await self._offered_tools(ctx)
        else:
            tools, schemas = self.tools, self._tool_schemas
        handoffs = self.handoff_tools() if self.handoffs else None
        if handoffs is not None:
            tools, schemas = {**tools, **handoffs.tools}, [*schemas, *handoffs.schemas]
        request = ModelRequest(  # positional: half the cost of keywords, on every step
            system, sent, schemas, self.tool_choice if schemas else None, self.name, self.params
        )
        if ctx.budget_accounts:  # [budgets] each request reserves first, settles after
            model = metered(ctx.budget_accounts, model)
        # -- the model call
        call_events = None
        if ctx.emitter.active:
            from agents._call_events import CallEvents  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

            call_events = CallEvents(ctx.emitter, self.name, ctx.args_listeners)
        requested = time.perf_counter() if ctx.record_model_calls else 0.0
        typed = None
        if checks is not None and checks.inputs:  # input guardrails beside the request
            asked_at = started_at + requested - started
            ask = functools.partial(
                self._ask, ctx, model, request, call_events, asked_at, requested
            )
            response, typed, call_events = await answer_checked(
                self, ctx, checks, ask, model, asked_at, requested
            )
        else:
            try:
                if self.output is not None:
                    from agents.output._call import complete_typed  # noqa: PLC0415 (ag_ui)

                    typed = await complete_typed(self, ctx, model, request, call_events)
                    response, call_events = typed.response, typed.call_events
                elif ctx.steps is None:
                    # Only a sink reading the answer live makes the request stream: tracing,
                    # logging and a thread's commits only watch (`Emitter.streaming`); and never
                    # an agent that turned streaming off.
                    on_chunk = (
                        call_events.on_chunk
                        if call_events is not None and self.stream and ctx.emitter.streaming
                        else None
                    )
                    response = await model.complete(request, on_chunk)
                else:  # a durable run: the answer is recorded (network.run.steps)
                    streams = self.stream and ctx.emitter.streaming
                    response = await ctx.steps.model(
                        self.name, self._answer_call(model, request, call_events, streams)
                    )
            except ModelError as exc:
                self._failed(ctx, model, exc, started_at + requested - started, requested)
                raise
        requests = (
            (
                typed.calls  # each re-ask of a typed answer is a request of its own
                if typed is not None
                else model_calls(
                    model, self.name, response, started_at + requested - started, requested
                )
            )
            if requested
            else ()
        )
        ctx.calls_in_flight = requests  # spent, not yet recorded: a sub-run's budget counts them
        # -- the answer, its tool calls, its output
        response.message.name = self.name
        if call_events is not None or hooked is not None:
            response = await self._answer(response, call_events, hooked)
        message = response.message
        calls = message.tool_calls
        records: list[ToolCallRecord] = []
        if calls:  # a lone plain sync tool's call needs no coroutine (`start_tool_calls`)
            refused: dict[str, ToolCallRecord] = {}
            asked = calls
            if handoffs is not None and len(calls) > 1:  # one handoff per answer
                calls, refused = handoffs.refuse_extra(calls)
            started_calls = (
                self._tool_calls(ctx, tools, calls)
                if self.client_tools or self.confirming or ctx.client_tools
                else start_tool_calls(ctx, self, tools, calls)
            )
            records = (
                started_calls
                if type(started_calls) is list
                else await cast(Coroutine[Any, Any, Any], started_calls)
            )
            if ctx.interrupts:  # a sub-run stopped on a person's confirmation (as_tool)
                records = held_calls(ctx, records)
            if refused:
                records = in_model_order(asked, records, refused)
        handed = None if handoffs is None else handoffs.record_of(self.name, records)
        if call_events is not None:
            await self._tool_results(ctx, records)
            if handed is not None:
                from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

                await ctx.emitter.emit(
                    events.handoff(handed.source, handed.target, handed.call_id, handed.reason)
                )
        if checks is not None and checks.outputs:  # on a final answer, before it is kept
            if typed is not None and typed.final:
                await check_answer(self, ctx, checks, typed.value)
            elif typed is None and message.content and not calls:
                await check_answer(self, ctx, checks, message.content)
        if typed is not None:
            if typed.final and self.output_key:
                self._store_output(ctx, typed.value)
        elif self.output_key and message.content and not message.tool_calls:  # the answer only
            kv = ctx.state.kv
            kv.writer = agent_writer(self.name, ctx.call_count)
            kv.set(self.output_key, message.content)
        result = self._result(
            ctx, prompt, history, response, records, started_at, started, requests
        )
        if typed is not None and typed.final:
            result.output_value = typed.value
        if handed is not None:
            result.handoff = handed
        if hooked is not None and hooks.on_finish is not None:
            hooked.result = result
            kept = await _maybe_await(hooks.on_finish(hooked))
            if kept is not None:
                result = kept
        return result

    async def _ask(
        self,
        ctx: RunContext,
        model: Any,
        request: ModelRequest,
        call_events: Any,
        asked_at: float,
        requested: float,
    ) -> tuple[Any, Any, Any]:
        """The model call of `call` as a function, for a call that runs input guardrails
        beside it (`agents.guardrails._stages`): its response, typed answer and call events."""
        typed = None
        try:
            if self.output is not None:
                from agents.output._call import complete_typed  # noqa: PLC0415 (ag_ui)

                typed = await complete_typed(self, ctx, model, request, call_events)
                return typed.response, typed, typed.call_events
            streams = self.stream and ctx.emitter.streaming
            if ctx.steps is None:
                on_chunk = call_events.on_chunk if call_events is not None and streams else None
                return await model.complete(request, on_chunk), None, call_events
            answer = self._answer_call(model, request, call_events, streams)
            return await ctx.steps.model(self.name, answer), None, call_events
        except ModelError as exc:
            self._failed(ctx, model, exc, asked_at, requested)
            raise

    def as_guardrail(self, kind: str) -> Guardrail:
        """This agent as a guardrail of `kind` ("input", "output", "tool_input",
        "tool_output"): its typed answer's `tripped` field says whether the tripwire fired
        (`agents.guardrails.input_guardrail(agent, tripped=...)` reads any answer)."""
        return AgentGuardrail(self, kind=kind)

    @staticmethod
    def _answer_call(model: Any, request: ModelRequest, call_events: Any, stream: bool) -> Any:
        """The model call as a function of no arguments, for a durable run's recorder."""
        on_chunk = call_events.on_chunk if call_events is not None and stream else None
        # partial, not a lambda: a lambda in `call` would give it cells for its captured
        # names, made on every call, durable or not.
        return functools.partial(model.complete, request, on_chunk)

    async def _start_hooks(self, ctx: RunContext, text: str | None, history: Any) -> AgentCall:
        """The hooks' view of the call, after `on_start` (which may change its prompt and
        history, or skip the call). Hooks get a prompt of their own, not the shared one."""
        hooked = AgentCall(self, ctx, [SystemMessage(text)] if text else [], history)
        if self.hooks.on_start is not None:
            await _maybe_await(self.hooks.on_start(hooked))
        return hooked

    def _failed(
        self, ctx: RunContext, model: Any, error: ModelError, started_at: float, requested: float
    ) -> None:
        """A model call that failed for good: the error names the model, and when the run is
        traced or limited, the failed request's attempts get their records (and chat spans)."""
        if error.model is None:
            error.model = getattr(model, "name", None)
        if requested:  # every attempt of it: a chat span each
            ctx.failed_model_calls = failed_model_calls(
                model, self.name, error, started_at, requested
            )

    async def _answer(self, response: Any, call_events: Any, hooked: AgentCall | None) -> Any:
        """The model's answer as history keeps it, for a streamed or hooked call: with the
        streamed message's id, after `on_response` (which may replace it); its stream closed."""
        message = response.message
        if call_events is not None:
            message.id = call_events.message_id
        if hooked is not None:
            hooked.response = response
            if self.hooks.on_response is not None:
                await _maybe_await(self.hooks.on_response(hooked))
                response = hooked.response
        if call_events is not None:
            await call_events.finish(response.message)
        return response

    def _tool_calls(
        self, ctx: RunContext, tools: dict[str, Tool], calls: list[ToolCall]
    ) -> list[ToolCallRecord] | Coroutine[Any, Any, list[ToolCallRecord]]:
        """Run the answer's tool calls when some may not run here: client tools' go to the
        client, calls that need a person's confirmation wait, the rest run
        (`agents.tools._dispatch`). Their records, or the coroutine that finishes them."""
        if ctx.client_tools or self.client_tools:
            calls = defer_client_calls(ctx, self, tools, calls)  # they run in the client
        if calls and self.confirming and needs_confirmation(tools, calls):
            return self._held(ctx, tools, calls)
        return start_tool_calls(ctx, self, tools, calls) if calls else []

    async def _held(
        self, ctx: RunContext, tools: dict[str, Tool], calls: list[ToolCall]
    ) -> list[ToolCallRecord]:
        """Hold the calls that wait for a person; run the rest."""
        calls = await hold(ctx, self, tools, calls)
        return await run_tool_calls(ctx, self, tools, calls) if calls else []

    async def _tool_results(self, ctx: RunContext, records: list[ToolCallRecord]) -> None:
        """A streamed call's tool results, sent to the client; predictions of the calls that
        did not commit undone first (predictive state)."""
        from network import events  # noqa: PLC0415 (ag_ui: only runs with a sink load it)

        predictor = ctx.predictor
        if predictor is not None:
            await predictor.settle(ctx, records)
        for record in records:
            await ctx.emitter.emit(
                events.tool_result(record.id + ":result", record.id, record.content)
            )

    def _store_output(self, ctx: RunContext, value: Any) -> None:
        """`output_key` receives the typed value through the key's type (its JSON form when
        the key is untyped, so an untyped store keeps holding plain JSON)."""
        kv: Any = ctx.state.kv
        key = self.output_key
        if key is None or self.output is None:
            return
        if kv.spec(key).adapter is None:
            value = self.output.json_form(value)
        kv.writer = agent_writer(self.name, ctx.call_count)
        kv.set(key, value)

    def _result(
        self,
        ctx: RunContext,
        prompt: list[Any],
        history: Any,
        response: Any,
        records: list[ToolCallRecord],
        started_at: float,
        started: float,
        requests: Sequence[ModelCall],
    ) -> InferenceResult:
        """What history keeps of the call (`response` None: an `on_start` hook skipped it).

        The one place an agent call's record is built. Positional: on every step, a keyword
        call of the record's `__init__` costs about 5,000 instructions more (its 13 fields by
        name); the names are the fields' order in `InferenceResult`."""
        skipped = response is None
        return InferenceResult(
            self.name,  # agent
            ctx.input,  # input
            prompt,  # prompt
            history,  # history
            [] if skipped else [response.message],  # output
            records,  # tool_calls
            None if skipped else response.raw,  # raw
            Usage() if skipped else response.usage,  # usage
            started_at,  # started_at
            (time.perf_counter() - started) * 1000,  # duration_ms
            [],  # state_delta (the loop sets it)
            skipped,  # skipped
            tuple(requests),  # model_calls
        )

    async def resume(self, ctx: RunContext, answered: list[Any]) -> InferenceResult:
        """Finish tool calls that waited for confirmation (`agents.tools._confirmation`)."""
        return await resume_call(self, ctx, answered)

    # -- on its own ----------------------------------------------------------------------

    async def run(
        self,
        input: str,
        *,
        max_steps: int = 10,
        state: Any = None,
        model: str | Model | None = None,
        state_schema: Any = None,
        deps: Any = None,
        resources: Mapping[str, Any] | None = None,
        sinks: Sequence[Any] = (),
    ) -> Any:
        """Run this agent alone: inference -> tools, repeated until it answers in text.

        Args:
            input: the user's message.
            max_steps: the cap on inferences (each with its tool calls).
            state: initial state, as for `Network.run` (a dict of keys, or a `State`).
            model: a model for this run when the agent has none of its own.
            state_schema: the schema of the one-agent network the run builds (a dict or a
                pydantic model, as for `Network(state_schema=...)`).
            deps: the run's live object, as for `Network.run`.
            resources: the run's resource factories, as for `Network.run`.
            sinks: event sinks, as for `Network.run`.

        Returns the `RunResult`; `stop_reason` is "agent_answered" when the agent answered
        without calling tools, "agent_skipped" when its `on_start` hook skipped the call, and
        "max_iter" when `max_steps` ran out first.
        """
        network = Network(
            self.name,
            agents=[self],
            router=answering(self),
            default_model=model,
            max_iter=max_steps,
            state_schema=state_schema,
        )
        return await network.run(input, state=state, deps=deps, resources=resources, sinks=sinks)

    run_sync = blocking(run)

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        state_in: Mapping[str, str] | None = None,
        state_out: Mapping[str, str] | None = None,
        max_steps: int = 10,
        state_schema: Any = None,
        limits: UsageLimits | None = None,
    ) -> Tool:
        """This agent as a tool of another agent (a supervisor): a call runs it as `run`
        does (inference -> tools until it answers) as a sub-run of the caller's run, and its
        answer is the tool's result. See `agents.tools._subrun` and docs/subagents.md.

        Args:
            name: the tool's name (default: the agent's name).
            description: what the supervisor's model reads about it (default: the agent's
                description).
            state_in: `{inner_key: outer_key}`: keys copied from the caller's state into the
                sub-run's fresh state (its state is its own otherwise).
            state_out: `{outer_key: inner_key}`: keys copied back when it finishes, written
                like any tool write (validated by the caller's schema).
            max_steps: the cap on its inferences per call.
            state_schema: the schema of its own state (a dict or a pydantic model).
            limits: `UsageLimits` of its own, on top of the caller's run's (which always apply).
        """
        label = f"agent {self.name!r}"
        return subrun_tool(
            SubrunTool(
                name=name or self.name,
                description=description if description is not None else self.description,
                network_of=agent_network_of(self, max_steps, state_schema),
                label=label,
                state_in=check_mapping(label, "state_in", state_in),
                state_out=check_mapping(label, "state_out", state_out),
                limits=limits,
            )
        )

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, tools={list(self.tools)})"


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
