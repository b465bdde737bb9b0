"""What the routing agent's model reads: the team, the task and a compact history.

The router sees a summary, not the conversation itself: it only has to decide who works next,
and sending every agent's full output to a second model on every step would double the cost
of a run. Each message becomes one line, cut to `max_chars`, and only the last `limit`
messages are shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from network.run.result_view import as_text

DEFAULT_PREAMBLE = """\
You are the router of a team of agents working on one task. After every agent call you \
decide who works next.
- Call `select_agent` with the name of the agent best placed to make progress now, and a \
short reason.
- Call `done` with a short summary when the task is complete, or when no agent can take it \
further.
Only the agents listed below exist; choose by their exact names."""

CHOOSE_NOW = "Choose the next agent with `select_agent`, or call `done`."


def routing_system_prompt(
    preamble: str,
    agents: Mapping[str, Any],
    task: str,
    messages: Sequence[Any],
    *,
    limit: int = 20,
    max_chars: int = 300,
) -> str:
    """The router's system text: instructions, the agents, the task and the history so far."""
    roster = "\n".join(
        f"- {name}: {_one_line(getattr(agent, 'description', '') or '(no description)')}"
        for name, agent in agents.items()
    )
    return (
        f"{preamble.strip()}\n\n## Agents\n{roster}\n\n## Task\n{task}\n\n"
        f"## Conversation so far\n{summarize_history(messages, limit, max_chars)}"
    )


def summarize_history(messages: Sequence[Any], limit: int = 20, max_chars: int = 300) -> str:
    """The last `limit` messages, one short line each; system messages are left out."""
    total = len(messages)
    start = max(0, total - limit)
    lines = [f"({start} earlier messages not shown)"] if start else []
    for index in range(start, total):
        line = _line(messages[index], max_chars)
        if line:
            lines.append(line)
    return "\n".join(lines) if lines else "(nothing yet)"


def _line(message: Any, max_chars: int) -> str | None:
    role = getattr(message, "role", None)
    if role == "user":
        return _cut(f"user: {_one_line(message.content)}", max_chars)
    if role == "assistant":
        who = message.name or "assistant"
        parts = [_one_line(message.content)] if message.content else []
        parts += [f"called {c.name}({as_text(c.arguments)})" for c in message.tool_calls]
        return _cut(f"{who}: {'; '.join(parts) or '(empty reply)'}", max_chars)
    if role == "tool":
        outcome = "error" if message.is_error else "result"
        return _cut(
            f"  {message.name or 'tool'} {outcome}: {_one_line(message.content)}", max_chars
        )
    return None


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _cut(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
