"""Comparing a request of today's code with the recorded one, and showing the difference.

Each part of a request is turned into lines of text, the same way on both sides, and compared
as lines; the difference is a unified diff of them (`--- recorded`, `+++ today`), which reads
well in a terminal, in JSON and on the dev UI's page.

What is compared, and what is not (decisions):

- instructions: the system messages' text;
- conversation: each message's role, author (an assistant's agent), text, tool calls (name
  and arguments) and tool results (tool, text, error flag). Ids are left out (message ids
  are made per run, tool call ids by the model), and so is an answer's reasoning, which is
  never sent back to the model;
- tools offered: each tool's schema, as JSON with sorted keys;
- routing: the agent (or the fan-out's agents) about to be called.

A context policy's cut of the conversation is not recorded (the thread keeps every message),
so the conversation compared is the one the call saw, before any cut.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from network.json_fields import json_fields

INSTRUCTIONS = "instructions"
CONVERSATION = "conversation"
TOOLS = "tools"
ROUTING = "routing"
REQUESTS = "requests"
TOOL_CALLS = "tool_calls"
TOOL_RESULTS = "tool_results"
ERROR = "error"

ASPECTS = (ROUTING, INSTRUCTIONS, CONVERSATION, TOOLS, REQUESTS, TOOL_CALLS, TOOL_RESULTS, ERROR)
"""Every part of a step a replay checks, in the order a step meets them."""

MAX_DIFF_LINES = 400  # a diff longer than this is cut (the report says how much was left out)
MAX_LINE = 2_000  # characters of one line of a diff


@dataclass(slots=True, frozen=True)
class Difference:
    """How one part of a step departs from the recording.

    Attributes:
        aspect: which part (`instructions`, `conversation`, `tools`, `routing`, `requests`,
            `tool_calls`, `tool_results`), or `error` for a call of today's that failed.
        summary: one line saying what differs.
        diff: a unified diff, recorded (`-`) against today (`+`).
    """

    aspect: str
    summary: str
    diff: str

    def to_dict(self) -> dict[str, str]:
        """The difference as JSON data: its fields (`network.json_fields`)."""
        return json_fields(self)


def unified(recorded: Sequence[str], today: Sequence[str]) -> str:
    """A unified diff of two texts' lines, recorded against today, cut to `MAX_DIFF_LINES`."""
    lines = list(
        difflib.unified_diff(
            [_cut(line) for line in recorded],
            [_cut(line) for line in today],
            "recorded",
            "today",
            lineterm="",
            n=2,
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        left = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"... ({left} more lines of diff)"]
    return "\n".join(lines)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + f"... ({len(line)} characters)"


def instruction_lines(prompt: Sequence[Any]) -> list[str]:
    """The system messages' text, line by line."""
    lines: list[str] = []
    for message in prompt:
        content = getattr(message, "content", None)
        lines.extend(str(content or "").splitlines() or [""])
    return lines


def conversation_lines(history: Sequence[Any]) -> list[str]:
    """The conversation, one message a block: `[role author] text`, then its tool calls."""
    lines: list[str] = []
    for message in history:
        role = getattr(message, "role", "?")
        if role == "assistant":
            head = f"[assistant {message.name}]" if message.name else "[assistant]"
        elif role == "tool":
            error = " error" if message.is_error else ""
            head = f"[tool {message.name or ''}{error}]".replace(" ]", "]")
        else:
            head = f"[{role}]"
        content = getattr(message, "content", None)
        text = content.splitlines() if isinstance(content, str) and content else []
        lines.append(f"{head} {text[0]}" if text else head)
        lines.extend(f"    {line}" for line in text[1:])
        for call in getattr(message, "tool_calls", None) or ():
            lines.append(f"    -> {call.name}({_json(call.arguments)})")
    return lines


def tool_lines(schemas: Sequence[Any]) -> list[str]:
    """The tools offered, each schema as indented JSON with sorted keys, by tool name."""
    named = sorted(schemas, key=_tool_name)
    return json.dumps(named, indent=2, sort_keys=True, default=str).splitlines()


def _tool_name(schema: Any) -> str:
    if isinstance(schema, dict):
        function = schema.get("function")
        if isinstance(function, dict):
            return str(function.get("name", ""))
    return ""


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def compare_lines(
    aspect: str, recorded: list[str], today: list[str], what: str
) -> Difference | None:
    """The `Difference` of `aspect` between the two renderings, or None when they agree."""
    if recorded == today:
        return None
    return Difference(aspect, _summary(aspect, recorded, today, what), unified(recorded, today))


def _summary(aspect: str, recorded: list[str], today: list[str], what: str) -> str:
    """One line: where the two first differ."""
    for line, (old, new) in enumerate(zip(recorded, today, strict=False), start=1):
        if old != new:
            return f"{what}: first difference at line {line}"
    if len(today) > len(recorded):
        return f"{what}: today's has {len(today) - len(recorded)} more lines"
    return f"{what}: today's has {len(recorded) - len(today)} fewer lines"


def compare_request(
    recorded_prompt: Sequence[Any],
    recorded_history: Sequence[Any],
    recorded_tools: Sequence[Any],
    prompt: Sequence[Any],
    history: Sequence[Any],
    tools: Sequence[Any],
) -> list[Difference]:
    """The differences between a recorded request and today's: instructions, conversation,
    tools offered (see the module docstring)."""
    found = [
        compare_lines(
            INSTRUCTIONS,
            instruction_lines(recorded_prompt),
            instruction_lines(prompt),
            "instructions",
        ),
        compare_lines(
            CONVERSATION,
            conversation_lines(recorded_history),
            conversation_lines(history),
            "conversation",
        ),
        compare_lines(TOOLS, tool_lines(recorded_tools), tool_lines(tools), "tools offered"),
    ]
    return [difference for difference in found if difference is not None]


def routing_difference(recorded: Sequence[str], today: Sequence[str]) -> Difference | None:
    """The difference between the agents the recording called next and today's router's."""
    if list(recorded) == list(today):
        return None
    said_recorded = ", ".join(recorded) or "nothing (the run ended)"
    said_today = ", ".join(today) or "nothing (the run ends)"
    return Difference(
        ROUTING,
        f"the recording called {said_recorded}; today's router calls {said_today}",
        unified([f"call {name}" for name in recorded], [f"call {name}" for name in today]),
    )


def tool_result_difference(name: str, recorded: Any, today: Any) -> Difference | None:
    """The difference between a tool call's recorded result and today's (its text and error
    flag: what the model reads)."""
    old = [*str(recorded.content).splitlines(), f"(error: {recorded.is_error})"]
    new = [*str(today.content).splitlines(), f"(error: {today.is_error})"]
    return compare_lines(TOOL_RESULTS, old, new, f"result of tool {name!r}")
