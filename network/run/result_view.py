"""How a finished `RunResult` shows itself: a readable repr, a rich table, an HTML table.

One list of rows (`rows`) feeds all three, so a terminal, a rich console and a Jupyter cell
show the same facts: why the run stopped, who ran, the output, tokens and time, the state keys
and anything it waits for. Values are cut short; the HTML escapes everything (state and output
may hold any text a model wrote).
"""

from __future__ import annotations

import html
import json
from typing import Any

WIDTH = 200  # characters of a value shown


def as_text(value: Any) -> str:
    """`value` as a person reads it: a string as it is, anything else as JSON (what JSON
    cannot hold as its `str`), or its `repr` when even that fails (a circular value)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def short(value: Any, width: int = WIDTH) -> str:
    """`value` on one line, cut to `width` characters."""
    text = " ".join(as_text(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def rows(result: Any) -> list[tuple[str, str]]:
    """The facts of a run, as (label, text) pairs."""
    calls = [r.agent for r in result.results]
    usage = result.usage
    out = [
        ("stop reason", str(result.stop_reason)),
        ("agent calls", f"{len(calls)}" + (f" ({' -> '.join(calls)})" if calls else "")),
    ]
    if result.output is not None:
        out.append(("output", short(result.output)))
    if result.summary and result.summary != result.output:
        out.append(("summary", short(result.summary)))
    out.append(
        (
            "usage",
            f"{result.spent.model_calls} requests, {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion = {usage.total_tokens} tokens",
        )
    )
    out.append(("time", f"{result.duration_ms / 1000:.2f}s"))
    for key in result.state.kv.keys():
        out.append((f"state {key}", short(result.state.kv.get(key), 120)))
    if result.interrupts:
        out.append(("waiting for", ", ".join(i.tool for i in result.interrupts)))
    if result.error is not None:
        out.append(("error", f"{type(result.error).__name__}: {short(str(result.error))}"))
    if result.thread_id:
        out.append(("thread", result.thread_id))
    return out


def plain(result: Any) -> str:
    """The repr: one line a person can read."""
    calls = [r.agent for r in result.results]
    output = short(result.output, 80) if result.output is not None else None
    return (
        f"RunResult(stop_reason={str(result.stop_reason)!r}, calls={len(calls)}, "
        f"output={output!r}, keys={result.state.kv.keys()!r}, "
        f"tokens={result.usage.total_tokens})"
    )


def rich_table(result: Any) -> Any:
    """A rich `Table` (rich is imported only when rich itself asks for it)."""
    from rich.table import Table  # noqa: PLC0415 (rich: only when rich renders a result)
    from rich.text import Text  # noqa: PLC0415

    table = Table(title=f"RunResult {result.run_id}", show_header=False, title_justify="left")
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for label, text in rows(result):
        table.add_row(label, Text(text))  # Text: no markup is read from model output
    return table


def html_table(result: Any) -> str:
    """An HTML table for Jupyter, every value escaped."""
    body = "".join(
        f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
        f"<td style='text-align:left'>{html.escape(text)}</td></tr>"
        for label, text in rows(result)
    )
    title = html.escape(f"RunResult {result.run_id}")
    return f"<table><caption style='text-align:left'>{title}</caption>{body}</table>"
