"""The live trace `agent-network run` prints: a sink on the run's typed events, drawn with rich.

Agent steps, streamed text, tool calls with their arguments and results, and state changes
are printed as they happen; `summary` prints the end: stop reason, agent calls, token usage
and timing. Plain ASCII markers, so any terminal (or a pipe) can show it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.text import Text

from network.cli.visible import visible
from network.run.events import (
    Custom,
    NamedCustom,
    RunError,
    RunEvent,
    RunInterrupted,
    RunStarted,
    StateDelta,
    StateSnapshot,
    StepFinished,
    StepStarted,
    TextContent,
    TextEnded,
    TextStarted,
    ToolCallArgs,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)

WIDTH = 100  # values are cut to this many characters


def short(value: Any, width: int = WIDTH) -> str:
    """`value` on one line, cut to `width` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


class Trace:
    """A run sink (a `Listener`: typed events) that prints each event as it arrives."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.tools: dict[str, list[str]] = {}  # tool_call_id -> [name, arguments so far]
        self.steps: dict[str, float] = {}
        self.text_open = False

    def line(self, *parts: tuple[str, str] | str) -> None:
        """One line of the trace; every part is shown as text (`visible`), never as what a
        terminal would do with it."""
        self._end_text()
        shown = [
            visible(part) if isinstance(part, str) else (visible(part[0]), part[1])
            for part in parts
        ]
        self.console.print(Text.assemble(*shown), highlight=False, soft_wrap=True)

    def _end_text(self) -> None:
        if self.text_open:
            self.text_open = False
            self.console.print()

    async def __call__(self, event: RunEvent) -> None:
        handler = HANDLERS.get(type(event))
        if handler is None and isinstance(event, (Custom, NamedCustom)):
            handler = Trace.on_custom
        if handler is not None:
            handler(self, event)

    def on_run_started(self, event: Any) -> None:
        self.line(("run ", "bold"), event.run_id, (f"  thread {event.thread_id}", "dim"))

    def on_custom(self, event: Any) -> None:
        if event.name == "agent_network.router_choice":  # see routers.routing_agent
            value = event.value
            if value.get("agent") is not None:
                self.line(
                    ("  router ", "blue"),
                    (str(value.get("router")), "dim"),
                    " chose ",
                    (str(value["agent"]), "bold"),
                    (f": {short(value.get('reason') or '')}", "dim"),
                )
            else:
                self.line(("  router ", "blue"), (str(value.get("router")), "dim"), " is done")
        if event.name == "PredictState":
            for entry in event.value:
                target = f"{entry['tool']}.{entry.get('tool_argument', '*')}"
                self.line(("  predicts ", "dim"), entry["state_key"], (f" from {target}", "dim"))

    def on_step_started(self, event: Any) -> None:
        self.steps[event.name] = time.perf_counter()
        self.line(("> ", "bold cyan"), (event.name, "bold cyan"))

    def on_step_finished(self, event: Any) -> None:
        started = self.steps.pop(event.name, None)
        took = f" {time.perf_counter() - started:.2f}s" if started is not None else ""
        self.line(("< ", "cyan"), (event.name, "cyan"), (took, "dim"))

    def on_text_message_start(self, event: Any) -> None:
        self._end_text()
        name = visible(event.name or "assistant")
        self.console.print(Text(f"  {name}: ", "dim"), end="")
        self.text_open = True

    def on_text_message_content(self, event: Any) -> None:
        # line breaks and tabs as they stream (a carriage return rich drops); the rest visible
        text = visible(event.delta, keep="\n\t\r")
        self.console.print(Text(text), end="", highlight=False, soft_wrap=True)

    def on_text_message_end(self, event: Any) -> None:
        self._end_text()

    def on_tool_call_start(self, event: Any) -> None:
        self.tools[event.call_id] = [event.name, ""]

    def on_tool_call_args(self, event: Any) -> None:
        if event.call_id in self.tools:
            self.tools[event.call_id][1] += event.delta

    def on_tool_call_end(self, event: Any) -> None:
        name, arguments = self.tools.get(event.call_id, ["?", ""])
        self.line(("  tool ", "yellow"), (name, "bold yellow"), f"({short(arguments)})")

    def on_tool_call_result(self, event: Any) -> None:
        name = self.tools.pop(event.call_id, ["?"])[0]
        content = event.content if isinstance(event.content, str) else str(event.content)
        failed = content.startswith(("Error:", "Rejected:"))
        style = "red" if failed else "green"
        self.line((f"  {'x' if failed else '='} ", style), (name, style), ": ", short(content))

    def on_state_delta(self, event: Any) -> None:
        # While a tool call is open the change is predicted or proposed, not yet committed.
        label = "  state~ " if self.tools else "  state "
        for data in event.ops:
            value = f" = {short(data['value'], 60)}" if "value" in data else ""
            self.line((label, "magenta"), f"{data['op']} {data['path']}", (value, "dim"))

    def on_state_snapshot(self, event: Any) -> None:
        keys = ", ".join(event.snapshot) or "empty"
        self.line(("  state ", "magenta"), ("snapshot: ", "dim"), keys)

    def on_run_interrupted(self, event: Any) -> None:
        for interrupt in event.interrupts:
            call_id = interrupt.to_agui()["tool_call_id"]  # a sub-run's: the call that waits
            self.line(
                ("  waiting ", "bold yellow"),
                f"{interrupt.message or interrupt.reason} ",
                (f"(interrupt {interrupt.id}, tool call {call_id})", "dim"),
            )

    def on_run_error(self, event: Any) -> None:
        self.line(("run failed: ", "bold red"), event.message)


HANDLERS: dict[type[Any], Callable[[Trace, Any], None]] = {
    RunStarted: Trace.on_run_started,
    StepStarted: Trace.on_step_started,
    StepFinished: Trace.on_step_finished,
    TextStarted: Trace.on_text_message_start,
    TextContent: Trace.on_text_message_content,
    TextEnded: Trace.on_text_message_end,
    ToolCallStarted: Trace.on_tool_call_start,
    ToolCallArgs: Trace.on_tool_call_args,
    ToolCallEnded: Trace.on_tool_call_end,
    ToolResult: Trace.on_tool_call_result,
    StateDelta: Trace.on_state_delta,
    StateSnapshot: Trace.on_state_snapshot,
    RunInterrupted: Trace.on_run_interrupted,
    RunError: Trace.on_run_error,
}
"""What the trace shows of each event class (a custom event: `Trace.on_custom`)."""


def summary(console: Console, result: Any) -> None:
    """The end of a run: why it stopped, who ran, tokens and time, and its output."""
    usage = result.usage
    calls = [r.agent for r in result.results]
    rows = [
        ("stop reason", str(result.stop_reason)),
        ("agent calls", f"{len(calls)}" + (f" ({' -> '.join(calls)})" if calls else "")),
        (
            "usage",
            f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion = "
            f"{usage.total_tokens} tokens",
        ),
        ("time", f"{result.duration_ms / 1000:.2f}s"),
    ]
    if result.interrupts:
        rows.append(("waiting for", ", ".join(i.tool for i in result.interrupts)))
    if result.summary and result.summary != result.output:
        rows.append(("summary", short(result.summary, 400)))  # a router's done(summary)
    if result.output:
        rows.append(("output", short(result.output, 400)))
    console.print(Text("-- summary --", "bold"))
    for label, value in rows:
        console.print(Text.assemble((f"{label:<12}", "bold"), visible(value)), highlight=False)
