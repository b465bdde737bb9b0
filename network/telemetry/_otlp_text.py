"""Text as OTLP carries it: UTF-8, which a Python `str` holding a lone surrogate has no form in.

Such text reaches a span from outside the library's checks: a custom model's call of a tool
named `"no\\udcffpe"` (the span `execute_tool no\\udcffpe`), a tool's result read with
`errors="surrogateescape"` (content), a network's or a model's name. The OTLP exporter then
fails to encode the whole batch ("Failed to encode span batch", seen with
opentelemetry-exporter-otlp-proto-http 1.45): every span in it is lost, other runs' too; an
attribute alone is dropped with an error and a traceback logged for each span that has it.
The metrics exporter fails likewise. Each lone surrogate is written as U+FFFD instead, as
the thread stores and the models mend text (`network.utf8`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from network.utf8 import utf8_text


def otlp_text(value: Any) -> Any:
    """An attribute value OTLP can encode: a text (or each text of a list or tuple) with its
    lone surrogates mended; anything else, and text that needs no mending, unchanged."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, list | tuple) and any(
        isinstance(item, str) and not item.isascii() for item in value
    ):
        return [utf8_text(item) if isinstance(item, str) else item for item in value]
    return value


def otlp_attributes(attributes: Mapping[str, Any] | None) -> Any:
    """`attributes` with every key and value `otlp_text` (None and `{}` as they are)."""
    if not attributes:
        return attributes
    return {utf8_text(key): otlp_text(value) for key, value in attributes.items()}
