"""Model output as text that has a UTF-8 form: each lone surrogate becomes U+FFFD.

JSON may spell half of a surrogate pair on its own (`"\\ud800"`), and Python's parser keeps it
as a lone surrogate: a `str` with no UTF-8 form. Taken as it came, such a character in an
answer's text, a tool call's name or id, or its arguments failed the run later and far away:
the next request's body could not be encoded (a `ModelError` the model never saw), a thread
commit or an AG-UI event could not be serialized. A server that sends one sent no character
there, so it is replaced by U+FFFD, as a UTF-8 decoder replaces bytes that are no character
(decision: the answer is kept, not refused; one bad character is no reason to lose it).
"""

from __future__ import annotations

import re
from typing import Any

from network.utf8 import LONE_SURROGATE

REPLACEMENT = "\ufffd"


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def may_spell_surrogates(body: bytes) -> bool:
    """Whether JSON `body` may spell a surrogate (`\\ud800` to `\\udfff`): only then does
    its parsed form need `utf8_json` (a UTF-8 body cannot carry one any other way). Most
    servers send UTF-8 and no `\\u` escape at all: one scan for it answers them."""
    return b"\\u" in body and _SURROGATE_ESCAPE.search(body) is not None


def utf8_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (ASCII text costs one scan)."""
    if text.isascii():
        return text
    return LONE_SURROGATE.sub(REPLACEMENT, text)


def utf8_json(value: Any) -> Any:
    """Parsed JSON with every string (object keys too) made `utf8_text`, in place where it can
    be; walked without recursion (a parser's own depth limit is no promise here)."""
    if isinstance(value, str):
        return utf8_text(value)
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key in list(item):
                inner = item[key]
                if isinstance(inner, str):
                    inner = utf8_text(inner)
                elif isinstance(inner, dict | list):
                    pending.append(inner)
                fixed = utf8_text(key) if isinstance(key, str) else key
                if fixed is not key:
                    del item[key]
                item[fixed] = inner
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    item[index] = utf8_text(inner)
                elif isinstance(inner, dict | list):
                    pending.append(inner)
    return value
