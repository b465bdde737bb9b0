"""The agent step: one agent call, as a short sequence of stages that names no feature.

`AgentStep.call` runs the stages of `network.run.capability` in order: the instructions, the
request, the model, the answer, the tool calls, the output, the record. Features
(guardrails, handoffs, hooks, typed output, ...) are capabilities resolved into the callables
of each stage (`network.run.stages`): a stage none of them implements is an empty tuple,
tested and skipped, so an agent with no capability runs what it always did.

Three things are written for the step's cost, which a thousand runs waiting at once pay many
times over. The model's coroutine is awaited right in the coroutine `call` hands back (one
frame less alive across the answer: `tests/agents/test_step_footprint.py` holds the chain).
The stage objects are created only when some capability reads them. And a call that nothing
but the step itself sees (no capability, no sink, no recorder, fixed instructions) runs
`_plain_call`: the same sequence with every stage empty, written with local names, without
the `AgentCall` record that only capabilities read (made and freed, it is about 5% of such a
step's instructions: `benchmarks/step_budget.py`).
"""

from __future__ import annotations

import copy
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from types import CoroutineType
from typing import TYPE_CHECKING, Any, cast

from agents.models._answer_shape import checked_answer
from agents.models._calls import failed_model_calls, model_calls
from agents.resume import waiting
from agents.tools._dispatch import start_tool_calls
from network.errors import ConfigurationError, ModelError
from network.history.fixed_list import NO_PROMPT, FixedList
from network.history.messages import SystemMessage, ToolCall
from network.history.model_answer import answer_of, awaitable_answer
from network.history.model_io import ModelRequest, ModelResponse
from network.history.results import InferenceResult, ModelCall, ToolCallRecord, Usage
from network.run.agent_call import NO_OUTPUT, AgentCall
from network.run.capability import Capability
from network.run.context import RunContext
from network.run.events import ToolResult
from network.run.stages import NO_STAGES, Stages, chain, resolve_stages
from network.state.provenance import agent_writer
from network.utf8 import lone_surrogate_at, utf8_json, utf8_text

if TYPE_CHECKING:
    from agents._template import Template
    from network.history.model_io import Model

__all__ = ["AgentStep"]

_CACHED_STAGES = 32  # resolutions kept per agent (one per network or run it serves at once)


class AgentStep:
    """The kernel of an agent: its call, in stages (`Agent` declares the options).

    Subclasses set the attributes the step reads (`Agent.__init__`): `name`, `tools` and
    their schemas, `tool_choice`, `params`, `output_key`, `stream`, the instructions'
    template and fixed prompt, the model, and `capabilities` (the agent's own).
    """

    name: str
    description: str
    tools: dict[str, Any]
    tool_choice: str
    params: dict[str, Any]
    output_key: str | None
    stream: bool
    capabilities: tuple[Capability, ...]
    _tool_schemas: list[Any]
    _template: Template | None
    _system: str | Callable[[RunContext], Any]
    _fixed_text: str | None
    _fixed_prompt: list[Any] | None
    _model_object: Model | None
    _model: str | dict[str, Any] | Model | None
    _last_prompt: tuple[str, FixedList] | None
    _stages: Stages
    _stages_cache: dict[int, Stages]

    def _init_step(self) -> None:
        """The step's own bookkeeping, before the first call."""
        self._last_prompt = None
        self._stages = NO_STAGES
        self._stages_cache = {}

    # -- what a call runs ------------------------------------------------------------------

    def stages(self, outer: tuple[Capability, ...]) -> Stages:
        """This agent's capabilities resolved under `outer` (the run's), cached."""
        stages = self._stages
        if stages.key is outer:
            return stages
        cache = self._stages_cache
        stages = cache.get(id(outer), NO_STAGES)
        if stages.key is not outer:  # never resolved, or for a tuple that died since
            if len(cache) >= _CACHED_STAGES:
                cache.pop(next(iter(cache)))
            stages = cache[id(outer)] = resolve_stages(self.capabilities, outer)
        self._stages = stages
        return stages

    def _forget_stages(self) -> None:
        """The agent's capabilities changed: resolve them again at the next call."""
        self._stages = NO_STAGES
        self._stages_cache = {}

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
        """The instructions of a function of the run context (sync or async)."""
        system = self._system
        assert callable(system), "a template's instructions are static (_static_instructions)"
        text = system(ctx)
        if inspect.isawaitable(text):
            text = await text
        if text is None:
            return ""
        if not isinstance(text, str):  # str() sent a list's or a dict's Python repr
            raise ConfigurationError(
                f"agent {self.name!r}: the system function returned {type(text).__name__}; it "
                "returns the instructions as text (or None for none)"
            )
        at = lone_surrogate_at(text)
        if at is not None:  # else every request failed, a ModelError about UnicodeEncodeError
            raise ConfigurationError(
                f"agent {self.name!r}: the system function returned text with a lone "
                f"surrogate ({text[at]!r} at {at}), which has no UTF-8 form: no request can "
                "carry it"
            )
        return text

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
        from agents.models.registry import resolve_model  # noqa: PLC0415 (models: on first use)

        return cast("Model", resolve_model(model))

    # -- one call inside a network ---------------------------------------------------------

    def call(
        self, ctx: RunContext, inside: AgentCall | None = None
    ) -> Coroutine[Any, Any, InferenceResult]:
        """One inference plus its tool calls, in stages; returns (the coroutine of) what history
        keeps. `inside`: the call begun, when `wrap_call` capabilities run around it
        (positional: cheaper). Not a coroutine itself: it hands back the call's own, so that a
        step awaits the model through no frame more (see the module docstring)."""
        stages = self._stages
        books = ctx.engine
        if stages.key is not books.stages.capabilities:
            stages = self.stages(books.stages.capabilities)
        if (
            inside is None
            and not stages.capabilities
            and self._fixed_prompt is not None
            and not books.emitter.active
            and books.steps is None
            and not books.record_model_calls
        ):
            return self._plain_call(ctx)
        return self._staged_call(ctx, stages, inside)

    async def _plain_call(self, ctx: RunContext) -> InferenceResult:
        """The call no capability, sink or recorder sees, with fixed instructions: what
        `_staged_call` does with every stage empty, without the `AgentCall` only they read."""
        prompt = self._fixed_prompt or NO_PROMPT
        history = ctx.state.history()
        schemas = self._tool_schemas
        model = self._model_object or self.resolve_model(ctx)
        started_at, started = time.time(), time.perf_counter()  # the call begins now
        request = ModelRequest(  # positional, as in `_staged_call`
            prompt, history, schemas or [], self.tool_choice if schemas else None, self.name,
            self.params,
        )  # fmt: skip
        try:
            pending: Any = model.complete(request, None)
            if type(pending) is not CoroutineType:  # a plain def's answer, awaitable or not
                pending = awaitable_answer(pending, model, self.name)
            response = checked_answer(await pending, model, self.name)
        except ModelError as exc:
            _name_model(exc, model)
            raise
        message = response.message
        message.name = self.name
        asked = message.tool_calls
        records: list[ToolCallRecord]
        if asked:  # as `_staged_call` runs them: no coroutine for a lone plain sync tool
            started_calls: Any = start_tool_calls(ctx, self, self.tools or {}, asked)
            records = started_calls
            if type(started_calls) is not list or ctx.engine.interrupts:
                records = await self._tools_finished(ctx, started_calls)
        else:
            records = []
            if message.content and self.output_key:  # a final answer, kept in `output_key`
                self._store_output(ctx, message.content)
        return self._record(
            ctx, prompt, history, response, records, started_at, started, (), schemas
        )

    async def _staged_call(
        self, ctx: RunContext, stages: Stages, inside: AgentCall | None
    ) -> InferenceResult:
        """The call through its stages, as an `AgentCall` the capabilities read and change
        (`inside`: begun already, called back by the `wrap_call` capabilities)."""
        books = ctx.engine
        call = inside or AgentCall(  # the call begins: what its request starts from
            self, ctx, self._fixed_prompt or NO_PROMPT, ctx.state.history(), self._fixed_text,
            self.tools, self._tool_schemas, self._model_object or self.resolve_model(ctx),
        )  # fmt: skip
        if inside is None and stages.wrap_call:  # around the whole call: it is called back
            return await self._wrapped_call(ctx, call, stages)
        if self._fixed_prompt is None or stages.instructions or stages.request:
            await self._prepare_request(call, stages)
        if call.skip:
            return self._result(call, None)
        request = ModelRequest(  # positional: half the cost of keywords, on every step
            call.prompt if call.sent_prompt is None else call.sent_prompt,
            call.history if call.sent_history is None else call.sent_history,
            call.schemas or [], self.tool_choice if call.schemas else None, self.name, self.params,
        )  # fmt: skip
        # -- the model: its coroutine awaited right here (see the module docstring)
        if books.emitter.active:
            self._watch(call)
        if stages.wrap_model or books.record_model_calls:  # capabilities around it, or timed
            response = await self._asked(call, stages, request)
        else:
            try:
                if call.events is None and call.follow_chunks is None and books.steps is None:
                    pending: Any = call.model.complete(request, None)  # nothing streams or records
                    if type(pending) is not CoroutineType:  # a plain def's answer
                        pending = awaitable_answer(pending, call.model, self.name)
                else:
                    pending = self._request(call, call.model, request)
                response = checked_answer(await pending, call.model, self.name)
            except ModelError as exc:
                self._failed(call, call.model, exc)
                raise
        # -- the answer, its tool calls, its output, the record
        if stages.answer or call.events is not None:
            response = await self._answer_stage(call, stages, response)
        else:
            call.response, response.message.name = response, self.name
        asked = response.message.tool_calls
        if not asked:
            call.records = []
        elif stages.tool_calls or stages.tool_results:
            call.records = await self._tools_staged(call, stages, asked)
        else:  # a lone plain sync tool's call needs no coroutine (`start_tool_calls`)
            records = start_tool_calls(ctx, self, call.tools or {}, asked, stages.wrap_tool, call)
            if type(records) is not list or books.interrupts:
                records = await self._tools_finished(ctx, records)
            call.records = records
        if call.events is not None:
            await self._tool_results(ctx, call.records)
        if call.output is not NO_OUTPUT or (response.message.content and not asked):
            await self._final_answer(call, stages, response.message.content)
        result = self._result(call, response)
        if stages.record:  # tested first: iterating even an empty tuple makes an iterator
            for change in stages.record:
                result = _kept(change, "record", await change(call, result), InferenceResult)
        return result

    async def _wrapped_call(
        self, ctx: RunContext, call: AgentCall, stages: Stages
    ) -> InferenceResult:
        """The call inside its `wrap_call` capabilities, the first outermost; the innermost
        proceeds to the call itself (`call(ctx, call)`)."""

        def proceed() -> Awaitable[InferenceResult]:
            return self.call(ctx, call)

        return cast(InferenceResult, await chain(stages.wrap_call, proceed, call)())

    # -- the stages a capability changes -------------------------------------------------

    async def _prepare_request(self, call: AgentCall, stages: Stages) -> None:
        """The prompt rendered from the instructions (unless it is the agent's fixed one),
        then the `request` stages, which may change what is sent or skip the model."""
        if self._fixed_prompt is None or stages.instructions:
            await self._instructions_stage(call, stages)
        for shape in stages.request:
            await shape(call)

    async def _instructions_stage(self, call: AgentCall, stages: Stages) -> None:
        """The instructions rendered from state (or a function's), then changed by the
        capabilities; the prompt shared by calls sending the same text."""
        text = self._fixed_text
        if text is None:
            text = self._static_instructions(call.run)
            if text is None:
                text = await self._dynamic_instructions(call.run)
        for change in stages.instructions:
            text = await change(call, text)
        call.text, call.prompt = text, self.prompt(text)

    def _watch(self, call: AgentCall) -> None:
        """A run with sinks: the call's text and tool calls become events (`call.events`)."""
        from agents._call_events import CallEvents  # noqa: PLC0415 (only runs with a sink need it)

        run = call.run
        call.events = CallEvents(run.engine.emitter, self.name, run.engine.args_listeners)

    async def _answer_stage(
        self, call: AgentCall, stages: Stages, response: ModelResponse
    ) -> ModelResponse:
        """The answer as history keeps it: named, with the streamed message's id, changed by
        the capabilities; its stream closed."""
        message = response.message
        message.name = self.name
        events = call.events
        if events is not None:
            message.id = events.message_id
        if stages.answer:
            given = copy.deepcopy(message)  # the answer as the model gave it, for the record
            for change in stages.answer:
                response = _kept(change, "answer", await change(call, response), ModelResponse)
            if response.message != given:  # changed: the record keeps both (a replay's)
                call.answers = (*call.answers[:-1], given)
        call.response = response
        if events is not None:
            await events.finish(response.message)
        return response

    @staticmethod
    async def _tools_finished(ctx: RunContext, started: Any) -> list[ToolCallRecord]:
        """The records of tool calls started, without those that wait for a person."""
        records: list[ToolCallRecord] = started if type(started) is list else await started
        return waiting(ctx, records) if ctx.engine.interrupts else records

    async def _tools_staged(
        self, call: AgentCall, stages: Stages, asked: list[ToolCall]
    ) -> list[ToolCallRecord]:
        """The tool calls with the capabilities' say: which run here (`tool_calls`), and
        what their records become (`tool_results`), in the model's order."""
        calls = asked
        for choose in stages.tool_calls:
            calls = await choose(call, calls)
        records: list[ToolCallRecord] = []
        if calls:
            ctx = call.run
            started = start_tool_calls(ctx, self, call.tools or {}, calls, stages.wrap_tool, call)
            records = await self._tools_finished(ctx, started)
        records = call.in_model_order(asked, records)
        for change in stages.tool_results:
            records = await change(call, records)
        return records

    async def _final_answer(self, call: AgentCall, stages: Stages, text: Any) -> None:
        """A final answer (a capability's typed value, else the answer's text): checked by
        the capabilities, then kept in `output_key`."""
        output = call.output
        if output is NO_OUTPUT:
            output = call.output = text
        if stages.output:
            output = await _changed(stages.output, call, output)
        if self.output_key:
            self._store_output(call.run, output, call.output_json)

    # -- the model request -----------------------------------------------------------------

    def _request(
        self, call: AgentCall, model: Model, request: ModelRequest
    ) -> Awaitable[ModelResponse]:
        """The model's answer to `request`, streamed when a sink reads it live (and the agent
        did not turn streaming off); recorded in a durable run (`network.run.steps`)."""
        events = call.events
        run = call.run
        on_chunk = (
            events.on_chunk
            if events is not None and self.stream and run.engine.emitter.streaming
            else None
        )
        if call.follow_chunks is not None:  # a capability follows the stream too
            on_chunk = call.follow_chunks(on_chunk)
        if run.engine.steps is None:
            pending = model.complete(request, on_chunk)
            if type(pending) is not CoroutineType:  # a plain def's answer, awaitable or not
                return cast(Awaitable[ModelResponse], awaitable_answer(pending, model, self.name))
            return pending
        # partial, not a lambda: a lambda here would give `_request` cells on every step
        return run.engine.steps.model(
            self.name, functools.partial(answer_of, model, self.name, request, on_chunk)
        )

    @staticmethod
    def _asking(call: AgentCall) -> None:
        """A request goes out: timed when the run records its requests (or the call does:
        see `_failed`)."""
        if call.run.engine.record_model_calls or call.requests:
            call.asked_at = time.perf_counter()

    def _spending(self, call: AgentCall, model: Any, response: ModelResponse) -> None:
        """A request answered: its records join the call's, when the run records them, or
        when the call already has a record (a request it went past, see `_failed`): then
        every request of the call is recorded, so that counting them counts them all."""
        if call.run.engine.record_model_calls or call.requests:
            call.requests = (*call.requests, *self._spent(call, model, response))

    async def _asked(self, call: AgentCall, stages: Stages, request: ModelRequest) -> ModelResponse:
        """The model's answer through the `wrap_model` capabilities (which may ask it more than
        once) and in a run that records its requests (`call.requests`): see `_ask`."""
        ask = chain(stages.wrap_model, functools.partial(self._ask, call), call)
        response: ModelResponse = await ask(request)
        if len(call.answers) == 1:  # one request: `output` will say what it answered
            call.answers = ()
        # spent, not yet recorded: a sub-run's budget counts them (a run that records no
        # requests never has any in flight)
        call.run.engine.calls_in_flight = call.requests
        return response

    async def _ask(self, call: AgentCall, request: ModelRequest) -> ModelResponse:
        """One model request, as the innermost `wrap_model` capability proceeds to it (it may
        be made several times in one call: each one's records join `call.requests`)."""
        model = call.model
        self._asking(call)
        try:
            response = checked_answer(await self._request(call, model, request), model, self.name)
        except Exception as exc:  # a provider's failure, or a model's own exception
            self._failed(call, model, exc)
            raise
        if call.run.engine.failed_model_calls:  # a failure a capability got past: not the run's
            call.run.engine.failed_model_calls = ()
        self._spending(call, model, response)
        call.answers = (*call.answers, response.message)  # kept when asked more than once
        return response

    @staticmethod
    def _spent(call: AgentCall, model: Any, response: ModelResponse) -> list[ModelCall]:
        """The records of the request just answered (usage limits and traces read them)."""
        asked = call.asked_at
        asked_at = call.started_at + asked - call.started
        return model_calls(model, call.agent.name, response, asked_at, asked)

    def _failed(self, call: AgentCall, model: Any, error: Exception) -> None:
        """A model request that failed for good: a `ModelError` names the model, and when the
        run is traced or limited, the failed request's attempts get their records (chat
        spans). A model's own exception (a custom `Model`, a `ScriptedModel` given one) is a
        failed request all the same.

        A failure a run may go past as a request made (`ModelError.counted_as_request`: a
        server refusing a typed answer's `response_format`) gets them in any run: the
        capability going past it adds them to the call's, and the call then records its
        other requests too (`_spending`), so that `RunResult.spent` counts every request
        sent, as a shared budget does, with usage limits or without. Untimed (the run does
        not time its requests), such a record is timed from the call's start."""
        counted = False
        if isinstance(error, ModelError):
            _name_model(error, model)
            counted = error.counted_as_request
        books = call.run.engine
        if books.record_model_calls or counted:
            asked = call.asked_at if books.record_model_calls or call.requests else call.started
            books.failed_model_calls = failed_model_calls(
                model, self.name, error, call.started_at + asked - call.started, asked
            )

    # -- after the answer ------------------------------------------------------------------

    async def _tool_results(self, ctx: RunContext, records: Sequence[ToolCallRecord]) -> None:
        """A watched call's tool results, sent to the client."""
        for record in records:
            await ctx.engine.emitter.emit(
                ToolResult(record.id + ":result", record.id, record.content)
            )

    def _store_output(
        self, ctx: RunContext, value: Any, output_json: Callable[[Any], Any] | None = None
    ) -> None:
        """`output_key` receives the final answer: through the key's type when it has one,
        else as it is (a typed output as its JSON form, `output_json(value)`: see
        `AgentCall.output_json`)."""
        kv: Any = ctx.state.kv
        key = self.output_key
        # The model's answer is kept as every store and client can keep it (a lone surrogate
        # becomes U+FFFD, as the model clients mend what a server sends), not refused as a
        # tool's own write of such text is: the model's output is not the caller's mistake.
        if type(value) is str:
            value = utf8_text(value)
        elif output_json is not None and kv.spec(key).adapter is None:
            value = utf8_json(output_json(value))  # a fresh value: mended in place
        kv.writer = agent_writer(self.name, ctx.call_count)
        kv.set(key, value)

    def _result(self, call: AgentCall, response: ModelResponse | None) -> InferenceResult:
        """What history keeps of a staged call (`response` None: the model was skipped)."""
        return self._record(
            call.run, call.prompt, call.history, response, call.records or [], call.started_at,
            call.started, call.requests, call.schemas, call.answers,
        )  # fmt: skip

    def _record(
        self,
        ctx: RunContext,
        prompt: Any,  # a capability may give any sequence
        history: Any,
        response: ModelResponse | None,
        records: list[ToolCallRecord],
        started_at: float,
        started: float,
        requests: tuple[ModelCall, ...] = (),
        schemas: list[Any] | None = None,
        answers: tuple[Any, ...] = (),
    ) -> InferenceResult:
        """What history keeps of the call (`response` None: the model was skipped).

        The one place an agent call's record is built. Positional: on every step, a keyword
        call of the record's `__init__` costs about 5,000 instructions more (its 15 fields by
        name); the names are the fields' order in `InferenceResult`."""
        skipped = response is None
        answered: Any = response  # None when skipped: read only when it is not
        return InferenceResult(
            self.name,  # agent
            ctx.input,  # input
            prompt,  # prompt
            history,  # history
            [] if skipped else [answered.message],  # output
            records,  # tool_calls
            None if skipped else answered.raw,  # raw
            Usage() if skipped else answered.usage,  # usage
            started_at,  # started_at
            (time.perf_counter() - started) * 1000,  # duration_ms
            [],  # state_delta (the loop sets it)
            skipped,  # skipped
            requests,  # model_calls
            schemas if schemas is not None else [],  # offered_tools
            answers,  # answers
        )


def _name_model(error: ModelError, model: Any) -> None:
    """A model request failed for good: the error names the model (unless it does already)."""
    if error.model is None:
        error.model = getattr(model, "name", None)


def _kept(change: Any, stage: str, value: Any, kind: type) -> Any:
    """`value`, what a capability's `stage` returned, when it is a `kind`; else a
    `ConfigurationError` naming the capability (a stage that forgot its `return` was an
    AttributeError on None further on)."""
    if isinstance(value, kind):
        return value
    owner = type(getattr(change, "__self__", change)).__name__
    raise ConfigurationError(
        f"capability {owner}.{stage} returned {value!r:.100}: return the {kind.__name__} "
        "it was given, changed or not"
    )


async def _changed(changes: Sequence[Any], call: AgentCall, value: Any) -> Any:
    """`value` through the `output` stage's `changes` in order: the final answer checked and
    changed before it is kept (any value: a typed output is the capability's to shape)."""
    for change in changes:
        value = await change(call, value)
    return value
