"""`Agent`: instructions, tools and a model, run by a network or on its own.

`Agent` declares an agent's options, checks them once, and turns those that switch a feature
on into capabilities (`network.run.capability`); the call itself is the kernel's
(`agents.step.AgentStep`): a short sequence of stages that names no feature.

Inside a network, one agent call is one model inference plus the tool calls it asked for; the
router decides whether the agent runs again to read its tools' results. On its own,
`await agent.run(input)` loops inference -> tools until the model answers in text or
`max_steps` is reached, every request carrying the previous tools' results.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from agents._template import Template
from agents.capabilities.confirmation import Confirmation
from agents.capabilities.handoffs import Handoffs
from agents.capabilities.hooks import AgentHooks, HooksCapability
from agents.capabilities.mcp.capability import MCPTools
from agents.capabilities.mcp.server import MCPServer
from agents.capabilities.output import OutputSpec, OutputValidator, TypedOutput, ValidatedOutput
from agents.capabilities.output._spec import OUTPUT_MODES
from agents.capabilities.remote_a2a import RemoteContext
from agents.capabilities.subagents import (
    FailingSubagents,
    agent_network_of,
    answering,
    raises_on_failure,
    subrun_tool,
)
from agents.models.a2a import A2AModel
from agents.resume import resume_call
from agents.step import AgentStep
from agents.tools.tool import Tool
from agents.tools.tool import tool as make_tool
from network.capabilities.client_tools import ClientTools
from network.capabilities.guardrails import AgentGuardrail, Guardrails
from network.capabilities.view import ConversationView
from network.errors import ConfigurationError
from network.history.model_io import Model
from network.history.model_option import checked_model
from network.history.results import InferenceResult
from network.network import Network
from network.numbers import check_number, checked_params
from network.one_argument import refused_as_one_argument
from network.run.capability import Capability, checked_capabilities, implements
from network.run.client_tools import ClientTool
from network.run.context import RunContext
from network.run.entry_points import blocking
from network.run.guardrails import Guardrail, coerce_guardrails
from network.run.interrupts import Answer, Interrupt
from network.run.limits import UsageLimits
from network.run.max_iter import check_max_iter
from network.run.retry_policy import RetryPolicy
from network.run.stages import chain
from network.run.subrun import SubrunTool, check_mapping
from network.run.tool_defaults import check_tool_defaults
from network.run.tool_names import default_tool_name
from network.state.schema import StateSchema, storable_key
from network.utf8 import lone_surrogate_at

TOOL_CHOICES = ("auto", "required", "none")


class Agent(AgentStep):
    """An LLM agent.

    Args:
        name: unique within a network; routers and logs use it.
        description: what the agent is for (the routing agent reads it).
        system: instructions: a string with `{key}` / `{key?}` placeholders filled from state
            (`{{` and `}}` for literal braces), or a sync/async function of the `RunContext`
            returning the text.
        tools: `@tool` functions (plain functions are wrapped with `@tool`), client tools,
            and `MCPServer`s, whose tools are listed when a run needs them
            (`agents.capabilities.mcp`).
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
            `output_key` stores it through the key's type. See `agents.capabilities.output`.
        output_mode: how the schema reaches the model: "auto" (ask the model), "native"
            (`response_format`), "tool" (a forced `final_output` tool) or "prompted".
        output_retries: how many times an answer that does not validate (against
            `output_type`, or an output validator) is asked again (with the errors) before
            `OutputValidationError`.
        output_validators: checks of each final answer with the run: `fn(value)` or
            `fn(ctx, value)`, sync or async, returning the value to keep (None: as it is) or
            raising `Retry(reason)` to ask the model again within `output_retries`; a
            rejected answer is never the output (see `agents.capabilities.output.validators`).
            `@agent.output_validator` adds one.
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
            typed output or `Guardrail`s (`network.capabilities.guardrails`). A trip stops the run
            with
            stop reason "guardrail" and commits nothing of the call.
        output_guardrails: checks of each final answer, before it is committed and before
            `output_key` is written.
        handoffs: agents (or agents' names, or `handoff(agent, ...)`) this agent may hand the
            conversation to: the model is offered one `transfer_to_<name>` tool for each (see
            `agents.capabilities.handoffs`). A list: items appended later are offered too
            (append before the `Network` is built: it reads them to choose its router, check
            and draw them).
        view: what this agent's requests send of the conversation: "all", "input" or
            `fn(ctx, messages) -> messages` (replacing its network's `view`; see
            `network.capabilities.view`). Default: the network's (in a network of several
            agents, "all": other agents' turns as context, not as this agent's own turns).
        memory: long-term memory across conversations: a `Memory` (or a `Memories` store,
            with `Memory`'s defaults): what it knows about the run's user is recalled into
            the instructions at the start of each run, and the model may call
            `save_memory` / `recall_memories` (`agents.capabilities.memory`, docs/memory.md).
        capabilities: more `Capability`s (`network.run.capability`), after those the
            keywords above build.

    Each keyword that turns a feature on builds its capability (`capabilities` lists them
    all, in the order their stages run): hooks, guardrails (the agent's and its tools'),
    output validators, typed output, the context policy, the view, memory, MCP servers'
    tools, handoffs, client tools and confirmation, then `capabilities=`.
    """

    output: OutputSpec | None = None  # the typed output's spec, when `output_type` is set

    def __init__(
        self,
        name: str,
        *positional: Any,
        description: str | None = "",
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
        output_validators: Sequence[Any] = (),
        view: Any = None,
        tool_retry: RetryPolicy | None = None,
        stream: bool = True,
        input_guardrails: Sequence[Any] = (),
        output_guardrails: Sequence[Any] = (),
        handoffs: Sequence[Any] = (),
        memory: Any = None,
        capabilities: Sequence[Capability] = (),
    ) -> None:
        given = locals()
        _refuse_misspellings(name, positional, state_schema)
        self._options = {option: given[option] for option in _CLONED}  # what `clone` copies
        self._init_step()
        self._built = False
        self.name = name
        if description is not None and not isinstance(description, str):
            # the routing agent's prompt and `as_tool` read it as text
            raise ConfigurationError(
                f"agent {name!r}: description must be a string or None, got {description!r}"
            )
        if description:
            _refuse_unsendable(name, "description", description)
        self.description = description or ""
        self.system = system  # checked, and its template made, by the property
        self.tools, self.client_tools, self.mcp_servers = _sorted_tools(name, tools)
        self.tool_choice = _checked_choice(self, tool_choice)
        self.model = model  # checked by the property
        if output_key is not None and (not isinstance(output_key, str) or not output_key):
            # "" stored nothing, silently; 3 failed when the run stored the answer
            raise ConfigurationError(
                f"agent {name!r}: output_key must be a state key (a non-empty string) or None, "
                f"got {output_key!r}"
            )
        self.output_key = output_key
        self.params = checked_params(f"agent {name!r}", {} if params is None else params)
        check_tool_defaults(f"agent {name!r}", tool_timeout, tool_retry)
        self.tool_timeout, self.tool_retry = tool_timeout, tool_retry
        self.stream = _checked_stream(name, stream)
        self.output_type = output_type
        # checked here too, not only with an output type: a bad value is refused wherever it is
        self.output_retries = check_number(
            f"agent {name!r}: output_retries", output_retries, integer=True
        )
        if isinstance(output_validators, str) or not isinstance(output_validators, Sequence):
            raise ConfigurationError(
                f"agent {name!r}: output_validators must be a list of functions, got "
                f"{output_validators!r}"
            )
        self.output_validators = list(output_validators)
        self.view = view
        if output_type is not None:
            self.output = OutputSpec(name, output_type, output_mode, output_retries)
        elif output_mode not in OUTPUT_MODES:  # checked with an output type, and here: a
            # misspelled mode was taken silently until an output type was added
            raise ConfigurationError(
                f"agent {name!r}: output_mode {output_mode!r} is not one of {OUTPUT_MODES}"
            )
        self.input_guardrails = coerce_guardrails(f"agent {name!r}", "input", input_guardrails)
        self.output_guardrails = coerce_guardrails(f"agent {name!r}", "output", output_guardrails)
        self.context_policy = context_policy
        self._hooks = AgentHooks.coerce(hooks, f"agent {name!r}")
        self._handoffs = Handoffs(name, handoffs, self._taken_names)  # checked, then copied
        self.memory = _memory_of(name, memory)
        self._extra = checked_capabilities(f"agent {name!r}", capabilities)
        self._built = True
        self._build()

    def _taken_names(self) -> list[str]:
        """The names of the agent's own tools (a handoff's tool may not take one)."""
        return [*self.tools, *self.client_tools]

    # -- the capabilities its options build ------------------------------------------------

    def _build(self) -> None:
        """The agent's capabilities, from its options, in the order their stages run."""
        if not self._built:
            return
        tools = self.tools.values()
        self._tool_schemas = [tool.schema for tool in tools]
        self._tool_schemas += [tool.schema for tool in self.client_tools.values()]
        built: list[Capability] = []
        if not self._hooks.empty:
            built.append(HooksCapability(self._hooks))
        tool_checks = any(tool.guardrails is not None for tool in tools)
        if self.input_guardrails or self.output_guardrails or tool_checks:
            built.append(
                Guardrails(self.input_guardrails, self.output_guardrails, tools=tool_checks)
            )
        if self.output_validators:  # outside the typed output: it sees the typed value
            built.append(
                ValidatedOutput(self.name, self.output_validators, self.output_retries, self.output)
            )
        if self.output is not None:
            built.append(TypedOutput(self.output, self.output_key))
        if self.context_policy is not None:
            built.append(_checked_policy(self.name, self.context_policy))
        if self.view is not None:
            built.append(ConversationView(self.view, where=f"agent {self.name!r}"))
        if self.memory is not None:
            built.append(_memory_capability(self.name, self.memory))
        if self.mcp_servers:
            client_schemas = [tool.schema for tool in self.client_tools.values()]
            built.append(MCPTools(self.name, self.mcp_servers, client_schemas))
        if self._handoffs.items:
            built.append(self._handoffs)  # also brings its targets' input filter to a network
        if self.client_tools:
            built.append(ClientTools(tuple(self.client_tools.values()), offered=False))
        if any(tool.requires_confirmation for tool in tools):
            built.append(Confirmation())
        if isinstance(self._model, A2AModel):
            built.append(RemoteContext())
        if any(raises_on_failure(tool) for tool in tools):
            built.append(FailingSubagents())
        self.capabilities = (*built, *self._extra)
        self._forget_stages()

    def __setattr__(self, name: str, value: Any) -> None:
        built = getattr(self, "_built", False)
        if built and name in _SET_LATER:
            self._set_option(name, value)
            return
        object.__setattr__(self, name, value)
        if built and name in _BUILDING:
            self._build()  # an option set after the agent was made takes effect at once
        if built and name in _CHECKED_BY_SETTER:
            self._options[name] = value  # checked by its property; `clone` copies it

    def _set_option(self, name: str, value: Any) -> None:
        """`agent.<option> = value` after the agent was made: checked as `Agent(...)` checks
        it (`agent.output_key = 3` was taken, and failed mid-run with a TypeError), the agent
        left as it was when it is refused, and copied by `clone` (which copied the value the
        constructor was given)."""
        given = value
        if name == "tools" and isinstance(value, Mapping):  # the form `agent.tools` reads as:
            # its function tools, beside the client tools and MCP servers it keeps
            given = [*value.values(), *self.client_tools.values(), *self.mcp_servers]
        options = {**self._options, "handoffs": list(self._handoffs.items), name: given}
        with warnings.catch_warnings():
            if name != "tools":  # the other options' warnings were given when it was made
                warnings.simplefilter("ignore")
            checked = Agent(self.name, **options)  # raises what the constructor raises
        for attribute in _SET_LATER[name]:
            object.__setattr__(self, attribute, getattr(checked, attribute))
        self._options[name] = given
        self._build()

    @property
    def hooks(self) -> AgentHooks:
        """The agent's `AgentHooks` (set an `AgentHooks` or a dict of hook functions)."""
        return self._hooks

    @hooks.setter
    def hooks(self, hooks: AgentHooks | dict[str, Any] | None) -> None:
        self._hooks = AgentHooks.coerce(hooks, f"agent {self.name!r}")
        self._build()

    @property
    def handoffs(self) -> list[Any]:
        """The agents (names, `handoff(...)`s) this agent may hand the conversation to: a
        list to which handoffs may be appended (before the `Network` is built)."""
        return self._handoffs.items

    @property
    def offered_tool_names(self) -> tuple[str, ...]:
        """The names of the tools this agent offers its model that are known before a run:
        its own tools, its client tools and its handoffs' `transfer_to_...` tools (an MCP
        server's are listed when the run starts). A client may not declare a tool of one of
        these names (`network.agui`: 422 `invalid_tool`)."""
        handoff_tools = self._handoffs.tools_now().tools if self._handoffs.items else {}
        return (*self.tools, *self.client_tools, *handoff_tools)

    @property
    def handoff_targets(self) -> tuple[str, ...]:
        """The names of the agents this one may hand off to (what networks check and draw)."""
        if self._handoffs.items and not any(c is self._handoffs for c in self.capabilities):
            self._build()  # appended to a list that was empty: offered from now on
        return self._handoffs.targets

    def tool_wraps(self, ctx: RunContext) -> tuple[Any, ...]:
        """The `wrap_tool` stages of this agent's capabilities in run `ctx` (for calls resumed
        after a person's answer: they run as any call of the agent does)."""
        return self.stages(ctx.engine.stages.capabilities).wrap_tool

    async def resume(
        self, ctx: RunContext, answered: list[tuple[Interrupt, Answer]]
    ) -> InferenceResult:
        """Take up this agent's answered interrupts through its capabilities' `wrap_resume`
        stages; what none of them takes up finishes as held tool calls do (`agents.resume`)."""
        wraps = self.stages(ctx.engine.stages.capabilities).wrap_resume
        finish = functools.partial(resume_call, self, ctx)
        return await (chain(wraps, finish, ctx) if wraps else finish)(answered)

    def resumption_calls(
        self, ctx: RunContext, answered: list[tuple[Interrupt, Answer]]
    ) -> list[list[tuple[Interrupt, Answer]]]:
        """The calls of this agent that continue `answered` in run `ctx`
        (`network.run.resumption`): one for them all, regrouped by its capabilities'
        `resume_calls` stages (a remote A2A task waiting for input gets a call of its own)."""
        calls = [answered]
        for capability in self.stages(ctx.engine.stages.capabilities).capabilities:
            if implements(capability, "resume_calls"):  # once per resumed run: not pre-resolved
                calls = capability.resume_calls(ctx, calls)
        return calls

    def output_validator(self, fn: OutputValidator) -> OutputValidator:
        """Decorator: add `fn` to this agent's output validators (`output_validators=`)."""
        self.output_validators = [*self.output_validators, fn]
        self._options["output_validators"] = self.output_validators  # `clone` copies it
        return fn

    def clone(self, **changes: Any) -> Agent:
        """A new agent with this one's options, `changes` applied (`name=` too):
        `agent.clone(name="reviewer", system="Review the code.")`."""
        options = {**self._options, **changes}
        name = options.pop("name", self.name)
        if "handoffs" not in changes:
            options["handoffs"] = list(self._handoffs.items)
        return Agent(name, **options)

    # -- what a call reads, prepared when it is set --------------------------------------

    @property
    def system(self) -> str | Callable[[RunContext], Any]:
        """The instructions: a template string, or a function of the run context."""
        return self._system

    @system.setter
    def system(self, system: str | Callable[[RunContext], Any]) -> None:
        template = Template(system, self.name) if isinstance(system, str) else None
        if template is None and not callable(system):
            raise ConfigurationError(f"agent {self.name!r}: system must be a string or a function")
        if isinstance(system, str):
            _refuse_unsendable(self.name, "system", system)
        else:
            _refuse_uncallable_with_ctx(self.name, system)
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
        checked = checked_model(f"agent {self.name!r}", "model", model)
        if isinstance(checked, A2AModel):
            _refuse_local_tools(self)
        self._model = checked
        # A model object is used as it is: `resolve_model` is asked only for a name.
        named = model is None or type(model) is str or type(model) is dict
        self._model_object = None if named else cast(Model, model)

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
        "max_iter" when `max_steps` ran out first. A `max_steps` that is not an int >= 1, or a
        `model` that is no model option, is a `ConfigurationError` naming it (not the
        `max_iter` or `default_model` of the network it builds).
        """
        check_max_iter(
            f"agent {self.name!r}: max_steps", max_steps, hint="leave it out for the default (10)"
        )
        # named `model`, as the caller passed it (not the `default_model` it becomes below)
        checked_model(f"agent {self.name!r}", "model", model)
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
        output_extractor: Callable[[Any], Any] | None = None,
        on_failure: str = "tell_model",
    ) -> Tool:
        """This agent as a tool of another agent (a supervisor): a call runs it as `run`
        does (inference -> tools until it answers) as a sub-run of the caller's run, and its
        answer is the tool's result. See `agents.capabilities.subagents` and docs/subagents.md.

        Args:
            name: the tool's name (default: the agent's name): 1 to 64 letters, digits, `_`
                or `-`, the names model providers accept (`network.run.tool_names`).
            description: what the supervisor's model reads about it (default: the agent's
                description).
            state_in: `{inner_key: outer_key}`: keys copied from the caller's state into the
                sub-run's fresh state (its state is its own otherwise).
            state_out: `{outer_key: inner_key}`: keys copied back when it finishes, written
                like any tool write (validated by the caller's schema).
            max_steps: the cap on its inferences per call.
            state_schema: the schema of its own state (a dict or a pydantic model).
            limits: `UsageLimits` of its own, on top of the caller's run's (which always apply).
            output_extractor: `fn(result) -> value`: the tool's result, from the sub-run's
                `RunResult` (default: its typed output, else its final text).
            on_failure: "tell_model" (default: a failed sub-run is an error result the model
                reads, listed in `RunResult.tool_errors`) or "raise" (it fails the caller's
                run with a `ToolError` naming this agent).
        """
        label = f"agent {self.name!r}"
        # Checked here: the sub-run's network is built per call, so a bad cap would otherwise
        # be an error result at every call, naming the inner network's `max_iter`.
        check_max_iter(f"{label}: max_steps", max_steps, hint="leave it out for the default (10)")
        # The agent's own name is any string: the tool's, given or taken from it, is checked
        # here, not refused by the provider at the supervisor's first request.
        default_tool_name(label, name, self.name)
        try:  # likewise checked here, once, not refused anew at every call
            state_schema = StateSchema.coerce(state_schema)
        except ConfigurationError as error:
            raise ConfigurationError(f"{label}: as_tool state_schema: {error}") from error
        return subrun_tool(
            SubrunTool(
                name=name or self.name,
                description=description if description is not None else self.description,
                network_of=agent_network_of(self, max_steps, state_schema),
                label=label,
                state_in=check_mapping(label, "state_in", state_in),
                state_out=check_mapping(label, "state_out", state_out),
                limits=limits,
                output_extractor=output_extractor,
                on_failure=on_failure,
                agents={self.name: self},
            )
        )

    def as_guardrail(self, kind: str) -> Guardrail:
        """This agent as a guardrail of `kind` ("input", "output", "tool_input",
        "tool_output"): its typed answer's `tripped` field says whether the tripwire fired
        (`agents.input_guardrail(agent, tripped=...)` reads any answer)."""
        return AgentGuardrail(self, kind=kind)

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, tools={list(self.tools)})"


# What `clone` copies: every option of `Agent`, as given.
_CLONED = (
    "description", "system", "tools", "model", "tool_choice", "output_key", "hooks", "params",
    "context_policy", "tool_timeout", "output_type", "output_mode", "output_retries",
    "output_validators", "view",
    "tool_retry", "stream", "input_guardrails", "output_guardrails", "handoffs", "memory",
    "capabilities",
)  # fmt: skip


def _refuse_misspellings(name: Any, positional: tuple[Any, ...], state_schema: Any) -> None:
    """The first guesses `Agent(...)` refuses, each saying how to write it."""
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"an agent needs a name, got {name!r}")
    if not storable_key(name):  # every result records it: refused here, not at a commit
        raise ConfigurationError(
            f"agent {name!r}: the name holds NUL or a lone surrogate, which a thread store "
            "cannot keep"
        )
    if positional:  # the positional spelling of the first releases, removed
        raise ConfigurationError(
            f"Agent({name!r}, ...): give the options by keyword "
            f"(Agent({name!r}, description=..., system=..., tools=..., model=...))"
        )
    if state_schema is not None:
        raise ConfigurationError(
            f"agent {name!r}: an agent has no state schema; the state belongs to the "
            "network: `Network(..., state_schema=...)`, or `agent.run(input, "
            "state_schema=...)` for an agent run on its own"
        )


def _refuse_unsendable(agent: str, option: str, text: str) -> None:
    """A `ConfigurationError` naming `agent` and `option` when `text`, which every request
    sends (the instructions; the description, in a routing prompt or a tool's schema), holds a
    lone surrogate: it has no UTF-8 form, so every request failed with a `ModelError` about
    a `UnicodeEncodeError` (and a scripted run's result could not be stored)."""
    at = lone_surrogate_at(text)
    if at is not None:
        raise ConfigurationError(
            f"agent {agent!r}: {option} holds a lone surrogate ({text[at]!r} at {at}), which "
            "has no UTF-8 form: no request can carry it"
        )


def _refuse_uncallable_with_ctx(agent: str, system: Callable[..., Any]) -> None:
    """A `ConfigurationError` naming `agent` when the instructions function cannot be called
    as `system(ctx)`: `system=lambda: "..."` was taken, and every call of the agent failed
    with a TypeError from inside the run."""
    shown = refused_as_one_argument(system)
    if shown is not None:
        raise ConfigurationError(
            f"agent {agent!r}: the system function {shown} cannot be called as "
            "system(ctx): it takes the run context, one positional parameter"
        )


def _refuse_local_tools(agent: Agent) -> None:
    """A `ConfigurationError` when `agent`, whose model is a remote A2A agent, has tools of
    its own: the remote is sent no tool schemas (it has its own tools), so they would never
    be called, silently."""
    names = [repr(name) for name in (*agent.tools, *agent.client_tools)]
    names += [f"MCP server {server.name or '(unnamed)'}" for server in agent.mcp_servers]
    if names:
        raise ConfigurationError(
            f"agent {agent.name!r}: its model is an A2AModel, a remote agent that uses its own "
            f"tools; the tools given here ({', '.join(names)}) would never be "
            "called. Give them to another agent of the network, or call the remote agent as "
            "a tool (`agent.as_tool()`) from one that has them"
        )


# Options set after the agent was made that `_set_option` checks (as the constructor does), with
# the attributes each one sets. `system`, `model` and `hooks` are properties, checked by theirs.
_SET_LATER: dict[str, tuple[str, ...]] = {
    "description": ("description",),
    "tools": ("tools", "client_tools", "mcp_servers"),
    "tool_choice": ("tool_choice",),
    "output_key": ("output_key",),
    "params": ("params",),
    "tool_timeout": ("tool_timeout",),
    "tool_retry": ("tool_retry",),
    "stream": ("stream",),
    "output_type": ("output_type", "output"),
    "output_retries": ("output_retries", "output"),
    "output_validators": ("output_validators",),
    "view": ("view",),
    "input_guardrails": ("input_guardrails",),
    "output_guardrails": ("output_guardrails",),
    "context_policy": ("context_policy",),
    "memory": ("memory",),
}
_CHECKED_BY_SETTER = frozenset({"system", "model", "hooks"})

# Options whose change rebuilds the agent's capabilities (set after the agent was made).
_BUILDING = frozenset(
    {
        "tools",
        "output",
        "output_key",
        "context_policy",
        "input_guardrails",
        "output_guardrails",
        "model",  # an `A2AModel` brings the remote_a2a capability
        "output_validators",
        "view",
    }
)


def _memory_of(owner: str, memory: Any) -> Any:
    """`Agent(memory=...)` as a `Memory`, or None. The memory capability is imported only
    by an agent that has memory: it needs the `memory` extra (numpy, the embedder)."""
    if memory is None:
        return None
    from agents.capabilities.memory import coerce_memory  # noqa: PLC0415 (see the docstring)

    return coerce_memory(owner, memory)


def _memory_capability(owner: str, memory: Any) -> Capability:
    from agents.capabilities.memory import MemoryCapability  # noqa: PLC0415 (as _memory_of)

    return MemoryCapability(owner, memory)


def _sorted_tools(
    owner: str, items: Sequence[Any]
) -> tuple[dict[str, Tool], dict[str, ClientTool], list[MCPServer]]:
    """`tools=` sorted: function tools (plain functions wrapped with `@tool`, sub-runs made
    tools), client tools, and MCP servers; a name given twice is a `ConfigurationError`."""
    tools: dict[str, Tool] = {}
    client: dict[str, ClientTool] = {}
    servers: list[MCPServer] = []
    if items is None:  # no tools, as the default ()
        return tools, client, servers
    if callable(items) or isinstance(items, Tool | ClientTool | MCPServer | str | Mapping):
        # one tool given bare was "'Tool' object is not iterable", a string its letters
        raise ConfigurationError(
            f"agent {owner!r}: tools must be a list of tools, got {type(items).__name__} "
            "(tools=[...])"
        )
    for index, item in enumerate(items):
        if not callable(item) and not isinstance(item, Tool | ClientTool | MCPServer | SubrunTool):
            # None was "'function' object has no attribute 'name'" (`tool(None)` is `@tool()`),
            # 3 "@tool needs a function", naming no agent
            raise ConfigurationError(
                f"agent {owner!r}: tools[{index}] is not a tool, got {item!r} (give @tool "
                "functions, plain functions, client tools or MCP servers)"
            )
        if isinstance(item, MCPServer):
            if any(item is known for known in servers):
                raise ConfigurationError(f"agent {owner!r}: MCP server {item!r} given twice")
            servers.append(item)
            continue
        wrapped = (
            item
            if isinstance(item, Tool | ClientTool)
            else subrun_tool(item)  # `network.as_tool(...)`
            if isinstance(item, SubrunTool)
            else make_tool(item)
        )
        if wrapped.name in tools or wrapped.name in client:
            raise ConfigurationError(f"agent {owner!r}: two tools are named {wrapped.name!r}")
        if isinstance(wrapped, ClientTool):
            client[wrapped.name] = wrapped
        else:
            tools[wrapped.name] = wrapped
    return tools, client, servers


def _checked_stream(agent: str, stream: Any) -> bool:
    if not isinstance(stream, bool):
        raise ConfigurationError(f"agent {agent!r}: stream must be True or False: {stream!r}")
    return stream


def _checked_choice(agent: Agent, choice: str) -> str:
    """`tool_choice`: one of `TOOL_CHOICES` or a tool of the agent (any name, with MCP
    servers: their tools are listed only in a run)."""
    if not isinstance(choice, str):  # a list was "unhashable type: 'list'"
        raise ConfigurationError(
            f"agent {agent.name!r}: tool_choice must be one of {TOOL_CHOICES} or the name of a "
            f"tool of this agent, got {choice!r}"
        )
    if (
        choice not in TOOL_CHOICES
        and choice not in agent.tools
        and choice not in agent.client_tools
        and not agent.mcp_servers
    ):
        raise ConfigurationError(
            f"agent {agent.name!r}: tool_choice {choice!r} is not one of {TOOL_CHOICES} "
            f"nor a tool of this agent ({', '.join(agent.tools) or 'none'})"
        )
    return choice


def _checked_policy(owner: str, policy: Any) -> Capability:
    if not isinstance(policy, Capability):
        raise ConfigurationError(
            f"agent {owner!r}: context_policy must be a ContextPolicy, got {policy!r}"
        )
    return policy
