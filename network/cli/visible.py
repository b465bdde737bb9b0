"""Text from a run made safe to print on a terminal.

What `agent-network run` prints comes from models and tools: a web page a tool fetched, a file
it read, a model's answer. Printed as it is, an escape sequence in it drives the terminal
(clears the screen, rewrites the lines above, retitles the window, makes a hidden link), a
right-to-left override reorders the text around it, and a lone surrogate (a file name that is
not UTF-8, read with `surrogateescape`) cannot be written to stdout at all: the trace raised
`UnicodeEncodeError` and the run ended in two tracebacks. Each such character is shown as its
escape instead (`\\x1b`, `\\u202e`, `\\ud800`), the way `repr` would write it.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

# C0 and C1 control characters and DEL; lone surrogates; the bidirectional controls (the
# embeddings, overrides and isolates, and the marks, which reorder neutral text around them).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, keep: str = "") -> str:
    """`text` with every control character, lone surrogate and bidirectional control written
    as its escape, except the characters in `keep` (`"\\n\\t"` for text shown as it streams)."""
    if keep:
        return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), text)
    return _UNSAFE.sub(_escape, text)
