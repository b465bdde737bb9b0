"""What an MCP tool's result becomes: the value the agent's tool call returns.

The mapping (documented in docs/mcp.md):

- `structuredContent`, when the server sends it, is the value (a dict): what
  `outputs_to_state` reads its `source` fields from.
- Otherwise each content block maps on its own, and one block is the value, several make a
  list (no block at all: an empty string):
  - text: the string, except that a text holding a JSON object or array becomes that parsed
    value (many servers send JSON as text; `outputs_to_state` can then read its fields); a
    text the parser cannot take (nested deeper than it goes) stays the string;
  - image and audio: a data URL string, `data:<mimeType>;base64,<data>` (the model reads it as
    text: tool results carry no images to the model);
  - an embedded resource: its text, or a data URL of its blob;
  - a resource link: its URI.
- `isError: true` is not a value: the tool call fails with the server's text as the error
  (its `structuredContent` as JSON when it sent no text), which the model reads as an error
  result.

A result larger than the server's `max_result_bytes` (`result_size`) is neither: the call
fails with an error naming the size, and nothing of it reaches the model.

Everything here comes from the server, so nothing is trusted: unknown block types map to
their JSON form instead of raising.
"""

from __future__ import annotations

import json
from typing import Any


def result_value(result: Any) -> Any:
    """The value of a successful `CallToolResult` (see the module's mapping)."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured
    values = [block_value(block) for block in getattr(result, "content", None) or ()]
    if not values:
        return ""
    return values[0] if len(values) == 1 else values


def result_size(result: Any) -> int:
    """How many bytes of text `result` (a `CallToolResult`) would give the model: its
    `structuredContent` as JSON when it has one (the value then), else its content blocks'
    text, data and URIs, in UTF-8."""
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        try:
            return utf8_size(json.dumps(structured, default=str, ensure_ascii=False))
        except (ValueError, TypeError, RecursionError):
            pass  # no JSON of it (an int past Python's digits): the dispatch says so; its blocks
    return sum(utf8_size(_block_text(b)) for b in getattr(result, "content", None) or ())


def _block_text(block: Any) -> str:
    """The text of a content block the model would read: its text, data or URI."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return str(block.data)
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return str(text if text is not None else getattr(resource, "blob", ""))
    if kind == "resource_link":
        return str(block.uri)
    dump = getattr(block, "model_dump_json", None)
    return dump(by_alias=True, exclude_none=True) if callable(dump) else str(block)


def utf8_size(text: str) -> int:
    """How many bytes `text` is in UTF-8 (what `max_result_bytes` counts)."""
    # an ASCII string (most are, base64 always) is as many bytes as characters: no copy
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def error_text(result: Any) -> str:
    """The text of an `isError` result: its text blocks joined; without any, its
    `structuredContent` as JSON (a server may put the error's details there alone); else a
    note that it had no message."""
    texts = [
        block.text
        for block in getattr(result, "content", None) or ()
        if getattr(block, "type", None) == "text"
    ]
    joined = "\n".join(texts)
    if joined:
        return joined
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        try:
            return json.dumps(structured, default=str, ensure_ascii=False)
        except (ValueError, TypeError, RecursionError):
            pass  # no JSON of it: the note below
    return "the server reported an error without a message"


def block_value(block: Any) -> Any:
    """One content block as a value."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return _text_value(block.text)
    if kind in ("image", "audio"):
        return data_url(block.mime_type, block.data)
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return _text_value(text)
        mime = getattr(resource, "mime_type", None) or "application/octet-stream"
        return data_url(mime, getattr(resource, "blob", ""))
    if kind == "resource_link":
        return str(block.uri)
    dump = getattr(block, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else str(block)


def data_url(mime_type: str, base64_data: str) -> str:
    """`data:<mime>;base64,<data>`: how images, audio and binary resources reach the agent."""
    return f"data:{mime_type};base64,{base64_data}"


def _text_value(text: str) -> Any:
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: a text
            return text
    return text
