"""`tool_result_text`: the text the model reads back from what a tool returned.

A string is read as it is; anything else as JSON: pydantic models and dataclasses as their
fields wherever they sit, bytes as their text when they are UTF-8 and as
`{"base64": "..."}` when they are not, and what else JSON has no form for (a date, a `set`)
as its `str()`.

Bytes (decision): before, `b"..."` reached the model as the quoted repr `"b'h\\xc3\\xa9llo'"`,
which no model reads as the text it holds. Text is what most tools that return bytes mean
(a file or an HTTP body read without decoding), so UTF-8 is read as text; binary data has no
text, and base64 under a key that names it is the one form a model can hand back whole
(pydantic-ai sends every bytes value as base64; the OpenAI Agents SDK sends the repr).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from network.state.values import is_pydantic_model, json_part
from network.utf8 import BYTES, bytes_text


def tool_result_text(result: Any) -> str:
    """What the model reads back from a tool's return value (raises when no text can be made
    of it: the dispatch makes that the call's failure, naming the tool)."""
    if isinstance(result, str):
        return result
    if isinstance(result, BYTES):
        text = bytes_text(result)
        return text if isinstance(text, str) else json.dumps(text)
    if inspect.isawaitable(result):  # `def t(): return client.get(...)`: the await forgotten
        if inspect.iscoroutine(result):
            result.close()  # never run: no "never awaited" warning at its collection
        raise TypeError(
            f"it is an awaitable ({type(result).__name__}) nothing awaited: a tool that "
            "awaits is an `async def`, or returns what it awaited"
        )
    if is_pydantic_model(result):
        return result.model_dump_json()
    try:
        return json.dumps(result, default=_text_part, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


def _text_part(value: Any) -> Any:
    """A part of a tool's result that `json` cannot write: `json_part`'s rule (a model inside a
    list reached the model as its `str()`, a dataclass as its repr), anything else its text."""
    return json_part(value, str)
