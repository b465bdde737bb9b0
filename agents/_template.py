"""Instruction templates: `{key}` and `{key?}` placeholders filled from state.

`{key}` must have a value in state (else `TemplateError` naming the key and agent); `{key?}`
becomes "" when absent, and a None value renders as "" too. Spaces and tabs inside the braces
are dropped (`{ key }` is `{key}`, `{ key? }` is `{key?}`), but not between the name and its
`?`, where ADK reads them as part of the name (`{key ?}` is text there and here); a placeholder
never spans lines (ADK's may). `{{` and `}}` are literal braces: ADK has no escape and fills
`{{key}}` with the key's value.

A key name is what Google ADK accepts: a Python identifier, optionally after one scope prefix
(`{user:name}`, `{app:motd}`, `{temp:context}`). Braces around anything else (`{invalid-key}`,
`{other:key}`, `{a.b}`, JSON in a prompt) are left as they are, as ADK leaves them, so a prompt
with an example object in it does not crash the run: a `}}` is read as an escape only when it
closes an escaped `{{`, so the closing braces of nested JSON (`{"a": {"b": 1}}`) reach the model
as written. ADK's `{artifact.name}` has no counterpart here (there is no artifact service): it
is refused when the instructions are set, with a `TemplateError` naming it, rather than sent to
the model as written.

Values that are not text are rendered as JSON (`true`, `{"a": 1}`), where ADK uses Python's
`str()` (`True`, `{'a': 1}`); a typed key's value in the JSON form its type gives it (a set as a
list, bytes as base64, a model as an object), and a value whose JSON form is text (a date, a
UUID, a Decimal) as that text, unquoted, as ADK's `str()` gives it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from network.errors import TemplateError

# Spaces inside the braces are allowed and dropped (`{ customer_id }`), as Google ADK does,
# except between the name and its `?` (ADK reads `{a ?}` as the name "a ", so as text) and
# except line breaks (ADK's would make `{\n return\n}` in a code block a missing key).
# Group 1: a key; group 3: an ADK artifact reference, refused (see the module docstring).
_PLACEHOLDER = re.compile(
    r"\{\{|\}\}|\{[ \t]*((?:user:|app:|temp:)?[^\W\d]\w*)(\?)?[ \t]*\}"
    r"|\{[ \t]*(artifact\.[^{}]*?)[ \t]*\??[ \t]*\}"
)


class Template:
    """A parsed template; `render(kv)` fills it. Parsed once, when the agent is defined."""

    __slots__ = ("_parts", "keys", "source", "static_text")

    def __init__(self, source: str, agent: str | None = None) -> None:
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
            elif match.group(3) is not None:
                raise _artifact_error(match.group(3), agent)
            elif not match.group(1).rpartition(":")[2].isidentifier():  # `\w` is wider
                literal.append(token)
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
            out.append(_text(kv.get(key), _spec(kv, key)))
        return "".join(out)


def _artifact_error(name: str, agent: str | None) -> TemplateError:
    return TemplateError(
        f"agent {agent!r}: instructions use {{{name}}}, an ADK artifact placeholder; "
        "agent-network has no artifact service: put the text in a state key and write "
        "{key}, or pass a function as `system`",
        key=name,
        agent=agent,
    )


def _spec(kv: Any, key: str) -> Any:
    """The key's spec in `kv`'s schema (what gives a typed value its JSON form), or None."""
    schema = getattr(kv, "schema", None)
    spec = getattr(schema, "spec", None)
    return spec(key) if callable(spec) else None


def _text(value: Any, spec: Any = None) -> str:
    if isinstance(value, str):
        return value
    if value is None:  # as Google ADK renders it: nothing, not `null`
        return ""
    if spec is not None:
        # A typed key's value in its JSON form, as stores and clients see it: a set as a list,
        # bytes as base64, a model as an object. (`json.dumps(default=str)` gave a set's or
        # bytes' Python repr as a quoted JSON string: `"{1, 2}"`.)
        value = spec.to_json(value)
        if isinstance(value, str):  # a date, a UUID, a Decimal: its text, as ADK's str() gives
            return value
    elif hasattr(value, "model_dump_json"):
        return str(value.model_dump_json())
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
