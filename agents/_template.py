"""Instruction templates: `{key}` and `{key?}` placeholders filled from state.

`{key}` must have a value in state (else `TemplateError` naming the key and agent); `{key?}`
becomes "" when absent, and a None value renders as "" too. Spaces inside the braces are
dropped (`{ key }` is `{key}`). `{{` and `}}` are literal braces. Braces around anything that
is not a key name (JSON in a prompt, say) are left as they are, so a prompt with an example
object in it does not crash the run: a `}}` is read as an escape only when it closes an escaped
`{{`, so the closing braces of nested JSON (`{"a": {"b": 1}}`) reach the model as written.
Keys may carry a scope prefix: `{user:name}`, `{app:motd}`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from network.errors import TemplateError

# Spaces inside the braces are allowed and dropped (`{ customer_id }`), as Google ADK does.
_PLACEHOLDER = re.compile(
    r"\{\{|\}\}|\{[ \t]*((?:user:|app:|temp:)?[A-Za-z_][\w.-]*)[ \t]*(\?)?[ \t]*\}"
)


class Template:
    """A parsed template; `render(kv)` fills it. Parsed once, when the agent is defined."""

    __slots__ = ("_parts", "keys", "source", "static_text")

    def __init__(self, source: str) -> None:
        self.source = source
        parts: list[tuple[str, str | None, bool]] = []  # (literal, key, optional)
        position = 0
        literal: list[str] = []
        escaped_open = 0  # `{{` seen and not yet closed by a `}}`
        for match in _PLACEHOLDER.finditer(source):
            literal.append(source[position : match.start()])
            position = match.end()
            token = match.group(0)
            if token == "{{":
                literal.append("{")
                escaped_open += 1
            elif token == "}}":
                if escaped_open:
                    literal.append("}")
                    escaped_open -= 1
                else:  # nested JSON closing two objects at once
                    literal.append("}}")
            else:
                parts.append(("".join(literal), match.group(1), bool(match.group(2))))
                literal = []
        literal.append(source[position:])
        parts.append(("".join(literal), None, False))
        self._parts = parts
        self.keys = [key for _, key, _ in parts if key is not None]
        # Without placeholders the text is fixed: read it once, not rendered per call.
        self.static_text: str | None = None if self.keys else parts[0][0]

    def render(self, kv: Any, agent: str | None = None) -> str:
        """The text with every placeholder filled from `kv`."""
        if self.static_text is not None:
            return self.static_text
        out: list[str] = []
        for literal, key, optional in self._parts:
            out.append(literal)
            if key is None:
                continue
            if not kv.has(key):
                if optional:
                    continue
                raise TemplateError(
                    f"agent {agent!r}: instructions use {{{key}}} but state has no key {key!r} "
                    f"(write {{{key}?}} to make it optional)",
                    key=key,
                    agent=agent,
                )
            out.append(_text(kv.get(key)))
        return "".join(out)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:  # as Google ADK renders it: nothing, not `null`
        return ""
    if hasattr(value, "model_dump_json"):
        return str(value.model_dump_json())
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)
