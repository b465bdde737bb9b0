"""`RunSpans`: the span tree of one run, built from its events.

    invoke_workflow {network}                 the run (root, INTERNAL)
      invoke_agent {router}                   a routing agent's decision (role "router")
        chat {model}                          each of its model requests (CLIENT)
      invoke_agent {agent}                    one agent call (role "agent")
        chat {model}                          each attempt of each model request
        execute_tool {tool}                   each tool call; concurrent ones are siblings
        apply_guardrail {guardrail}           each guardrail check (`guardrail_spans`)
          chat {model}                        a guardrail agent's requests
          handoff {target}                    under a `transfer_to_...` call that handed off

`{model}` and `gen_ai.request.model` are the name sent on the wire (`gpt-4o-mini` for
`openai/gpt-4o-mini`); the provider is `gen_ai.provider.name`.

The root span starts when the sink is made (before RUN_STARTED, which carries its ids) and
ends with RUN_FINISHED or RUN_ERROR. An agent span is live from STEP_STARTED to STEP_FINISHED;
its chat and tool spans are written at STEP_FINISHED from the call's record
(`InferenceResult.model_calls`, `.tool_calls`) with the times recorded there, so nothing is
added to the agent's own code path. A `Parallel` fan-out's branches are sibling agent spans
under the run, each live from its branch's STEP_STARTED to its STEP_FINISHED (read from the
branch's own context, `RunContext.engine.branch_contexts`); a branch that failed sends no
STEP_FINISHED, so its span ends at the join, or at RUN_ERROR when the fan-out failed, with its
failed request's chat span and the time that request ended. Router spans are written from
`RunContext.engine.router_calls` at the next event. Interrupts (RUN_FINISHED's outcome) and the
answers a resumed run starts from are events on the root span; a resumed run's root links to
the interrupted run's root.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from network.logger import get_logger
from network.run.context import RunContext
from network.run.events import (
    ContextCompacted,
    MemoryRecalled,
    RunCancelled,
    RunError,
    RunEvent,
    RunFinished,
    RunInterrupted,
    StepFinished,
    StepStarted,
    SubagentStarted,
)
from network.telemetry import conventions as c
from network.telemetry._otlp_int import otlp_int
from network.telemetry._outcome import fail, hex_ids, tool_outcome
from network.telemetry.content import (
    ContentRecorder,
    key_of,
    messages,
    state_values,
    system_instructions,
)
from network.telemetry.guardrail_spans import guardrail_spans
from network.telemetry.handoff_span import handoff_span
from network.telemetry.metrics import Instruments
from network.telemetry.propagation import span_context as remote_span_context
from network.telemetry.run_trace import RunTrace, parent_of, run_trace
from network.telemetry.subagent_spans import SubagentToolSpans


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _start_root(trace: Any, tracer: Any, ctx: RunContext, books: RunTrace) -> Any:
    """The run's root span: under its parent's tool span for a sub-run, linked to the
    interrupted runs' roots for a resumed one."""
    name = ctx.network.name
    attributes: dict[str, Any] = {
        c.OPERATION: c.INVOKE_WORKFLOW,
        c.AGENT_NAME: name,  # v0.1.0: a workflow is named by gen_ai.agent.name
        c.RUN_ID: ctx.run_id,
    }
    if ctx.thread_id is not None:
        attributes[c.CONVERSATION_ID] = ctx.thread_id
    links = [
        trace.Link(_span_context(trace, ids, remote=True), {c.RESUMED: True}) for ids in books.links
    ]
    parent = None
    nests = parent_of(ctx)
    if nests is not None:  # a sub-run: under its parent's tool span
        trace_id, span_id, sampled = nests
        parent = trace.set_span_in_context(
            trace.NonRecordingSpan(
                _span_context(trace, (trace_id, span_id), remote=False, sampled=sampled)
            )
        )
    elif books.remote is not None and not trace.get_current_span().get_span_context().is_valid:
        # a served request's `traceparent` (`propagation`): under that remote span, unless
        # a span is current already (a server instrumentation's, which read the same header)
        remote = trace.NonRecordingSpan(remote_span_context(books.remote))
        parent = trace.set_span_in_context(remote)
    return tracer.start_span(
        f"{c.INVOKE_WORKFLOW} {name}", context=parent, attributes=attributes, links=links
    )


def _span_context(trace: Any, ids: tuple[str, str], *, remote: bool, sampled: bool = True) -> Any:
    """The span context of the hex `(trace id, span id)` a run's context carries; `sampled`:
    the flag a parent-based sampler follows (a sub-run's parent run was sampled out)."""
    trace_id, span_id = ids
    flags = trace.TraceFlags.SAMPLED if sampled else trace.TraceFlags.DEFAULT
    return trace.SpanContext(
        int(trace_id, 16), int(span_id, 16), is_remote=remote, trace_flags=trace.TraceFlags(flags)
    )


class RunSpans:
    """A run sink that writes the run's spans (and metrics)."""

    def __init__(
        self,
        ctx: RunContext,
        tracer: Any,
        instruments: Instruments | None,
        content: ContentRecorder | None,
    ) -> None:
        from opentelemetry import trace  # noqa: PLC0415 (opentelemetry: only imported once an SDK is configured)

        self._trace = trace
        self.ctx = ctx
        self.tracer = tracer
        self.instruments = instruments
        self.content = content
        self.books = books = run_trace(ctx)  # telemetry's own per-run data
        self.root = _start_root(trace, tracer, ctx, books)
        self.root_context = trace.set_span_in_context(self.root)
        span_context = self.root.get_span_context()
        if span_context.is_valid:
            ctx.engine.trace_id, ctx.engine.span_id = hex_ids(span_context)
        self.root_ids = _nesting_ids(span_context)
        books.here = self.root_ids  # a run started in the run's own code nests here
        if span_context.trace_state:  # what the trace's requests carry on (`propagation`)
            books.tracestate = span_context.trace_state.to_header()
        if ctx.engine.resume:
            self._mark_resumed(ctx.engine.resume)
        self.agent_span: Any = None
        self.unfinished: list[Any] = []  # agent spans closed by an error, ended by RUN_ERROR
        # The live agent spans of a fan-out's branches: branch id -> (span, branch context,
        # how many results the branch's history held when it started).
        self.branch_spans: dict[str, tuple[Any, RunContext, int]] = {}
        self.results_seen = len(ctx.state.results)
        self.router_calls_seen = 0
        self.guardrails_seen = 0  # checks in `ctx.engine.guardrails` already drawn
        self.discarded_seen = 0  # requests of answers a trip discarded, already drawn
        # Tool calls running a sub-run (`agents.as_tool`): live spans (`RunTrace.subagents`).
        self.subagents = SubagentToolSpans(tracer, trace, content, books)

    def _mark_resumed(self, answered: Sequence[tuple[Any, Any]]) -> None:
        """A resumed run: its root marked resumed, an event per answer it starts from."""
        self.root.set_attribute(c.RESUMED, True)
        for interrupt, answer in answered:
            self.root.add_event(
                c.RESUME_EVENT,
                {
                    "agent_network.interrupt.id": interrupt.id,
                    "agent_network.approved": answer.approved,
                    c.TOOL_NAME: interrupt.tool,
                    c.TOOL_CALL_ID: interrupt.tool_call_id,
                    c.AGENT_NAME: interrupt.agent,
                },
            )

    async def __call__(self, event: Any) -> None:
        try:
            self._on(event)
        except Exception as error:  # a tracing failure must not fail the run it observes
            get_logger().warning("telemetry.failed", run_id=self.ctx.run_id, error=repr(error))

    def _on(self, event: RunEvent) -> None:
        if event.subagent_run_id is not None:
            # a sub-run's own events (it has spans of its own), but a sub-run this run started
            if isinstance(event, SubagentStarted) and event.parent_subagent_run_id in (
                None,
                self.ctx.run_id,
            ):
                self._start_subagent(event)
            return
        if isinstance(event, StepStarted):
            branch = event.branch
            if branch is not None:  # a parallel branch's call, live from here to its end
                self._start_branch(branch, event.name)
                return
            self._routers()
            if event.fan_out is None:
                self._start_agent(event.name)
        elif isinstance(event, StepFinished):
            branch = event.branch
            if branch is not None:
                self._finish_branch(branch)
                return
            if event.fan_out is None:
                self._finish_agent()
            else:
                self._finish_fan_out()
        elif isinstance(event, ContextCompacted):
            self._compacted(event.value)
        elif isinstance(event, MemoryRecalled):
            self._recalled(event.value)
        elif isinstance(event, RunFinished):
            self._routers()
            self._guardrails(self.root_context)
            self._finish_run(event)
        elif isinstance(event, RunError):
            self._routers()
            self._guardrails(self._unfinished_context())
            self._fail_run(event)

    # -- agents ----------------------------------------------------------------------------

    def _start_subagent(self, event: SubagentStarted) -> None:
        """A tool call starts a sub-run: its span, under the calling agent's (a branch's)."""
        branch = event.branch
        if branch is not None and branch in self.branch_spans:
            self.subagents.start(event, self.branch_spans[branch][0])
        else:
            self.subagents.start(event, self.agent_span)

    def _start_agent(self, name: str) -> None:
        self.agent_span = self._agent_span(self.ctx, name)
        # a run its code starts (`await other.run(...)` in a tool) nests under it
        self.books.here = _nesting_ids(self.agent_span.get_span_context())

    def _agent_span(self, ctx: RunContext, name: str) -> Any:
        """An agent call's span, started now with what is known before the model is asked."""
        agent = ctx.agent
        model, provider = _model_of(getattr(agent, "agent", agent), ctx.network.default_model)
        attributes: dict[str, Any] = {
            c.OPERATION: c.INVOKE_AGENT,
            c.PROVIDER: c.provider_name(provider),
            c.AGENT_NAME: name,
            c.ROLE: "agent",
            c.CALL_INDEX: ctx.call_count,
        }
        if model:
            attributes[c.REQUEST_MODEL] = c.wire_model(model, provider)
        description = getattr(agent, "description", None)
        if description:
            attributes[c.AGENT_DESCRIPTION] = description
        if ctx.thread_id is not None:
            attributes[c.CONVERSATION_ID] = ctx.thread_id
        if ctx.branch is not None:
            attributes[c.BRANCH] = ctx.branch.id
        return self.tracer.start_span(
            f"{c.INVOKE_AGENT} {name}", context=self.root_context, attributes=attributes
        )

    def _finish_agent(self) -> None:
        span = self.agent_span
        if span is None:
            return
        self.agent_span = None
        self.books.here = self.root_ids
        self._guardrails(self._trace.set_span_in_context(span))
        results = self.ctx.state.results
        if len(results) <= self.results_seen:
            guardrails = self.ctx.engine.guardrails
            if guardrails is not None and guardrails.tripped is not None:  # stopped, not failed
                span.set_attribute(c.GUARDRAIL_STOPPED, guardrails.tripped.guardrail)
                parent = self._trace.set_span_in_context(span)
                for call in guardrails.discarded[self.discarded_seen :]:  # answers thrown away
                    self._chat(call, parent, None)
                self.discarded_seen = len(guardrails.discarded)
                span.end()
                return
            self.unfinished.append(span)  # closed because the run failed: see RUN_ERROR
            return
        self.results_seen = len(results)
        self._close_agent(span, results[-1])

    # -- a fan-out's branches --------------------------------------------------------------

    def _start_branch(self, branch: str, name: str) -> None:
        """A branch's agent span, siblings under the run, started as the branch starts."""
        for branch_ctx in self.ctx.engine.branch_contexts:
            if branch_ctx.branch is not None and branch_ctx.branch.id == branch:
                span = self._agent_span(branch_ctx, name)
                self.branch_spans[branch] = (span, branch_ctx, len(branch_ctx.state.results))
                return

    def _finish_branch(self, branch: str) -> None:
        """A branch's call is done: its span ends now, with its chat and tool spans."""
        live = self.branch_spans.get(branch)
        if live is None:
            return
        span, branch_ctx, seen = live
        results = branch_ctx.state.results
        if len(results) <= seen:  # closed by its failure: ended at the join or RUN_ERROR
            return
        del self.branch_spans[branch]
        self._close_agent(span, results[-1], state=branch_ctx.state)

    def _finish_fan_out(self) -> None:
        """After the join: the spans of branches that failed (they sent no STEP_FINISHED);
        the branches' guardrail checks, under the run (concurrent branches share one log)."""
        self._guardrails(self.root_context)
        results = self.ctx.state.results
        errors = {
            result.branch: result.error
            for result in results[self.results_seen :]
            if result.branch is not None and result.error is not None
        }
        self.results_seen = len(results)
        for branch in list(self.branch_spans):
            error = errors.get(branch)
            self._end_branch(branch, error.split(":", 1)[0] if error else "_OTHER")

    def _end_branch(self, branch: str, error_type: str) -> None:
        """End a failed branch's span with its failed request, when the branch ended."""
        span, branch_ctx, _ = self.branch_spans.pop(branch)
        failed = branch_ctx.engine.failed_model_calls
        parent = self._trace.set_span_in_context(span)
        for call in failed:
            self._chat(call, parent, None)
        fail(span, error_type)
        ended = max((_end_ns(call) for call in failed), default=None)
        span.end(end_time=ended)

    def _close_agent(self, span: Any, result: Any, state: Any = None) -> None:
        """End an agent span with its call's chat and tool spans; `state`: the branch's own,
        for a fan-out's branch (the run's otherwise)."""
        parent = self._trace.set_span_in_context(span)
        calls = result.model_calls
        for index, call in enumerate(calls):
            last = index == len(calls) - 1
            self._chat(call, parent, result if last and not call.error else None)
        handoff = result.handoff
        for record in result.tool_calls:
            made = handoff if handoff is not None and handoff.call_id == record.id else None
            self._tool(span, parent, record, made)
        self.subagents.end_held(span)
        keys = sorted({key_of(op["path"]) for op in result.state_delta})
        attributes = _usage({}, calls)
        if calls:
            attributes[c.REQUEST_MODEL] = c.wire_model(calls[-1].model, calls[-1].provider)
            attributes[c.PROVIDER] = c.provider_name(calls[-1].provider)
        attributes[c.KEYS_WRITTEN] = keys
        if result.skipped:
            attributes[c.SKIPPED] = True
        span.set_attributes(attributes)
        content = self.content
        if content is not None and result.state_delta:
            kv = (state or self.ctx.state).kv
            content.set(span, c.STATE_VALUES, state_values(kv, keys))
        span.end()

    def _compacted(self, value: Any) -> None:
        """A span event on the agent's span: what its context policy dropped, summarised and
        trimmed from the request (counts and the summariser's name; the summary's text only
        when content is captured)."""
        span = self.agent_span
        if span is None or not isinstance(value, dict):
            return
        attributes: dict[str, Any] = {
            f"{c.COMPACTION}{_snake(name)}": otlp_int(field)
            for name, field in value.items()
            if isinstance(field, bool | int | str)
        }
        summaries = self.ctx.state.summaries
        content = self.content
        if content is not None and value.get("summarized") and summaries:
            text = content.attribute(c.SUMMARY_TEXT, summaries[-1].text)
            if text is not None:
                attributes[c.SUMMARY_TEXT] = text
        span.add_event(c.COMPACTION_EVENT, attributes)

    def _recalled(self, value: Any) -> None:
        """A span event on the agent's span: what its memory recalled at the start of the run
        (`agents.capabilities.memory`): the namespace, the keys and scores, never the texts."""
        span = self.agent_span
        if span is None or not isinstance(value, dict):
            return
        keys = [str(key) for key in value.get("keys", ())]
        scores = [float(score) for score in value.get("scores", ())]
        span.add_event(
            c.MEMORY_RECALLED_EVENT,
            {
                c.MEMORY_NAMESPACE: "/".join(str(label) for label in value.get("namespace", ())),
                c.MEMORY_KEYS: keys,
                c.MEMORY_SCORES: scores,
                c.MEMORY_COUNT: len(keys),
            },
        )

    def _chat(self, call: Any, parent: Any, result: Any) -> None:
        start = _ns(call.started_at)
        model = c.wire_model(call.model, call.provider)
        attributes: dict[str, Any] = {
            c.OPERATION: c.CHAT,
            c.PROVIDER: c.provider_name(call.provider),
            c.REQUEST_MODEL: model,
        }
        if call.agent:
            attributes[c.AGENT_NAME] = call.agent
        if call.error:
            attributes[c.ERROR_TYPE] = call.error
            if call.response_model:
                attributes[c.RESPONSE_MODEL] = call.response_model
        else:
            _usage(attributes, [call])
        # Written after the fact from the call's record (sampling sees every attribute).
        span = self.tracer.start_span(
            f"{c.CHAT} {model}",
            context=parent,
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
            start_time=start,
        )
        if call.error:
            fail(span, call.error)
        content = self.content
        if content is not None and result is not None:
            if result.prompt:
                content.set(span, c.SYSTEM_INSTRUCTIONS, system_instructions(result.prompt))
            content.set(span, c.INPUT_MESSAGES, messages(result.history))
            content.set(span, c.OUTPUT_MESSAGES, messages(result.output))
        span.end(end_time=start + int(call.duration_ms * 1e6))
        if self.instruments is not None:
            self.instruments.record(call, call.agent or "")

    def _tool(self, agent_span: Any, parent: Any, record: Any, handoff: Any = None) -> None:
        if self.subagents.end(record):  # a sub-run's tool call: its span was live
            return
        if record.error_type == "rejected":  # never ran: the person said no
            agent_span.add_event(
                "agent_network.tool.rejected",
                {c.TOOL_NAME: record.name, c.TOOL_CALL_ID: record.id},
            )
            return
        start = _ns(record.started_at)
        attributes = {
            c.OPERATION: c.EXECUTE_TOOL,
            c.TOOL_NAME: record.name,
            c.TOOL_CALL_ID: record.id,
            c.TOOL_TYPE: "function",
        }
        if record.is_error:
            attributes[c.ERROR_TYPE] = record.error_type or "_OTHER"
        if record.attempts > 1:
            attributes[c.TOOL_ATTEMPTS] = record.attempts
        span = self.tracer.start_span(
            f"{c.EXECUTE_TOOL} {record.name}",
            context=parent,
            attributes=attributes,
            start_time=start,
        )
        tool_outcome(span, record, self.content)
        content = self.content
        end = start + int(record.duration_ms * 1e6)
        if handoff is not None:
            handoff_span(self.tracer, self._trace.set_span_in_context(span), handoff, start, end)
            if content is not None and handoff.reason:
                content.set(span, c.HANDOFF_REASON, handoff.reason)
        span.end(end_time=end)

    def _guardrails(self, parent: Any) -> None:
        """Spans of the guardrail checks that ended since the last ones were drawn."""
        guardrails = self.ctx.engine.guardrails
        if guardrails is None or len(guardrails.checks) <= self.guardrails_seen:
            return
        checks = guardrails.checks[self.guardrails_seen :]
        self.guardrails_seen = len(guardrails.checks)
        guardrail_spans(self.tracer, self._trace, checks, parent, self._chat, fail)

    # -- routers ---------------------------------------------------------------------------

    def _routers(self) -> None:
        """Spans of the routing requests made since the last event, one per decision."""
        calls = self.ctx.engine.router_calls
        pending = calls[self.router_calls_seen :]
        if not pending:
            return
        self.router_calls_seen = len(calls)
        groups: list[list[Any]] = []
        for call in pending:
            if groups and groups[-1][0].agent == call.agent:
                groups[-1].append(call)
            else:
                groups.append([call])
        for group in groups:
            first, last = group[0], group[-1]
            name = first.agent or "router"
            attributes: dict[str, Any] = {
                c.OPERATION: c.INVOKE_AGENT,
                c.PROVIDER: c.provider_name(last.provider),
                c.AGENT_NAME: name,
                c.ROLE: "router",
                c.REQUEST_MODEL: c.wire_model(last.model, last.provider),
                c.CALL_INDEX: self.ctx.call_count,
            }
            if self.ctx.thread_id is not None:  # as every agent span of a run on a thread
                attributes[c.CONVERSATION_ID] = self.ctx.thread_id
            span = self.tracer.start_span(
                f"{c.INVOKE_AGENT} {name}",
                context=self.root_context,
                attributes=attributes,
                start_time=_ns(first.started_at),
            )
            parent = self._trace.set_span_in_context(span)
            for call in group:
                self._chat(call, parent, None)
            span.set_attributes(_usage({}, group))
            if last.error:
                fail(span, last.error)
            span.end(end_time=_ns(last.started_at) + int(last.duration_ms * 1e6))

    # -- the run ---------------------------------------------------------------------------

    def _finish_run(self, event: RunFinished) -> None:
        root = self.root
        if isinstance(event, RunCancelled):
            root.set_attribute(c.STOP_REASON, "cancelled")
            self._end_unfinished("cancelled")
        else:
            result = event.result if isinstance(event.result, dict) else {}
            reason = result.get("stopReason")
            if reason:
                root.set_attribute(c.STOP_REASON, str(reason))
        interrupts = event.interrupts if isinstance(event, RunInterrupted) else ()
        for interrupt in interrupts:
            shown = interrupt.to_agui()  # as the client sees it: a sub-run's waiting call
            metadata = shown["metadata"]
            root.add_event(
                c.INTERRUPT_EVENT,
                {
                    "agent_network.interrupt.id": interrupt.id,
                    "agent_network.interrupt.reason": interrupt.reason,
                    c.TOOL_CALL_ID: shown["tool_call_id"] or "",
                    c.TOOL_NAME: str(metadata.get("tool", "")),
                    c.AGENT_NAME: str(metadata.get("agent", "")),
                },
            )
        budget = self.ctx.engine.budget
        if budget is not None and budget.exceeded is not None:
            exceeded = budget.exceeded
            root.set_attribute(c.LIMIT, exceeded.limit)
            root.set_attribute(c.LIMIT + ".value", otlp_int(exceeded.value))
            root.set_attribute(c.LIMIT + ".actual", otlp_int(exceeded.actual))
        self._end_root()

    def _unfinished_context(self) -> Any:
        """Where the checks of an agent call that failed go: under its span."""
        span = self.agent_span or (self.unfinished[-1] if self.unfinished else None)
        return self.root_context if span is None else self._trace.set_span_in_context(span)

    def _fail_run(self, event: RunError) -> None:
        error_type = event.code or "_OTHER"
        self._end_unfinished(error_type)
        self.root.set_attribute(c.STOP_REASON, "error")
        fail(self.root, error_type)
        try:
            content = self.content
            if content is not None and event.message:  # content: it may quote a temp: value
                message = content.attribute(c.EXCEPTION_MESSAGE, event.message)
                if message is not None:
                    fail(self.root, error_type, message)
        finally:  # a failing redact hook is logged (`__call__`); the root ends all the same
            self._end_root()

    def _end_unfinished(self, error_type: str) -> None:
        for branch in list(self.branch_spans):  # a fan-out the error cut short
            self._end_branch(branch, error_type)
        if self.agent_span is not None:
            self.unfinished.append(self.agent_span)
            self.agent_span = None
        failed = self.ctx.engine.failed_model_calls
        if failed and self.unfinished:  # the request that ended the run, under its agent
            parent = self._trace.set_span_in_context(self.unfinished[-1])
            for call in failed:
                self._chat(call, parent, None)
        self.subagents.fail_all(error_type)  # sub-runs the error cut short
        for span in self.unfinished:
            fail(span, error_type)
            span.end()
        self.unfinished.clear()

    def _end_root(self) -> None:
        ctx = self.ctx
        root = self.root
        root.set_attribute(c.INPUT_TOKENS, otlp_int(ctx.engine.prompt_tokens))
        root.set_attribute(c.OUTPUT_TOKENS, otlp_int(ctx.engine.completion_tokens))
        root.end()


def _nesting_ids(span_context: Any) -> tuple[str, str, bool] | None:
    """`(trace id, span id, sampled)` of a span a sub-run nests under; None when invalid."""
    if not span_context.is_valid:
        return None
    return (*hex_ids(span_context), bool(span_context.trace_flags.sampled))


def _end_ns(call: Any) -> int:
    return _ns(call.started_at) + int(call.duration_ms * 1e6)


def _usage(attributes: dict[str, Any], calls: Sequence[Any]) -> dict[str, Any]:
    """Add the token usage, response model, finish reason and cost of `calls` to `attributes`."""
    if not calls:
        return attributes
    attributes[c.INPUT_TOKENS] = otlp_int(sum(call.usage.prompt_tokens for call in calls))
    attributes[c.OUTPUT_TOKENS] = otlp_int(sum(call.usage.completion_tokens for call in calls))
    attributes[c.CACHE_READ_TOKENS] = otlp_int(sum(call.usage.cached_tokens for call in calls))
    response_models = [call.response_model for call in calls if call.response_model]
    if response_models:
        attributes[c.RESPONSE_MODEL] = response_models[-1]
    reasons = [call.finish_reason for call in calls if call.finish_reason]
    if reasons:
        attributes[c.FINISH_REASONS] = reasons[-1:]
    costs = [call.cost_usd for call in calls if call.cost_usd is not None]
    if costs:
        attributes[c.COST_USD] = sum(costs)
    return attributes


def _model_of(agent: object, default: Any) -> tuple[str | None, str | None]:
    """The model name and provider an agent will ask, as far as can be told before it asks."""
    model = getattr(agent, "model", None)
    if model is None:
        model = default
    if model is None:
        return None, None
    if isinstance(model, str):
        return model, model.split("/", 1)[0] if "/" in model else None
    name = getattr(model, "name", None)
    provider = getattr(model, "provider", None)
    return (name if isinstance(name, str) else None), (
        provider if isinstance(provider, str) else None
    )


def _snake(name: str) -> str:
    """`summaryCovers` -> `summary_covers` (the event's keys are camelCase, as AG-UI's are)."""
    return "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in name)
