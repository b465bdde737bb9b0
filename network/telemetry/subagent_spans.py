"""The spans of tool calls that run a sub-run (an agent or a network used as a tool).

    invoke_agent {supervisor}
      execute_tool {tool}                    live from SUBAGENT_STARTED to the call's record
        invoke_workflow {delegate}           the sub-run's root (`run_trace.parent_of`)

A plain tool call's span is written after the fact from its record. A sub-run's tool span
must exist while the sub-run runs, so that the sub-run's root span can name it as its parent:
`RunSpans` starts it when the run's SUBAGENT_STARTED passes and hands its ids to the tool
(`RunTrace.subagents`, by subagent run id), and ends it from the call's record
when the agent call is recorded. A call the sub-run's confirmation holds has no record in this
run: its span ends with the agent call, marked "interrupted". An error ends the live ones failed.
"""

from __future__ import annotations

from typing import Any

from network.telemetry import conventions as c
from network.telemetry._outcome import fail, hex_ids, tool_outcome
from network.telemetry.run_trace import RunTrace


class SubagentToolSpans:
    """The live tool spans of one run's sub-runs: tool call id -> (span, its agent span)."""

    __slots__ = ("books", "content", "live", "trace", "tracer")

    def __init__(self, tracer: Any, trace: Any, content: Any, books: RunTrace) -> None:
        self.tracer = tracer
        self.books = books  # the run's `RunTrace` (its branches share it)
        self.trace = trace  # the `opentelemetry.trace` module
        self.content = content
        self.live: dict[str, tuple[Any, Any]] = {}

    def start(self, event: Any, agent_span: Any) -> None:
        """SUBAGENT_STARTED: the tool span under `agent_span` (the run's, or a parallel
        branch's), its ids kept for the sub-run's root (`RunTrace.subagents`)."""
        call_id = event.parent_tool_call_id
        if call_id is None or agent_span is None:
            return
        span = self.tracer.start_span(
            f"{c.EXECUTE_TOOL} {event.name}",
            context=self.trace.set_span_in_context(agent_span),
            attributes={
                c.OPERATION: c.EXECUTE_TOOL,
                c.TOOL_CALL_ID: call_id,
                c.TOOL_TYPE: "function",
                c.SUBAGENT_RUN_ID: event.subagent_run_id,
            },
        )
        self.live[call_id] = (span, agent_span)
        span_context = span.get_span_context()
        if span_context.is_valid:
            sampled = bool(span_context.trace_flags.sampled)  # the run's sampler decided
            self.books.subagents[event.subagent_run_id] = (*hex_ids(span_context), sampled)

    def end(self, record: Any) -> bool:
        """The call's record: its live span ends with what the record says (True), or the
        call ran no sub-run (False)."""
        live = self.live.pop(record.id, None)
        if live is None:
            return False
        span = live[0]
        span.update_name(f"{c.EXECUTE_TOOL} {record.name}")
        span.set_attribute(c.TOOL_NAME, record.name)
        tool_outcome(span, record, self.content)
        span.end(end_time=int(record.started_at * 1e9) + int(record.duration_ms * 1e6))
        return True

    def end_held(self, agent_span: Any) -> None:
        """The agent call is recorded: its sub-runs' spans that got no record are held by a
        confirmation inside (the run that answers it continues the sub-run)."""
        for call_id, (span, parent) in list(self.live.items()):
            if parent is agent_span:
                del self.live[call_id]
                span.set_attribute(c.STOP_REASON, "interrupted")
                span.end()

    def fail_all(self, error_type: str) -> None:
        """The run failed: every live one ends failed."""
        for span, _parent in self.live.values():
            fail(span, error_type)
            span.end()
        self.live.clear()
