"""Model output as text that has a UTF-8 form: each lone surrogate becomes U+FFFD.

JSON may spell half of a surrogate pair on its own (`"\\ud800"`), and Python's parser keeps it
as a lone surrogate: a `str` with no UTF-8 form. Taken as it came, such a character in an
answer's text, a tool call's name or id, or its arguments failed the run later and far away:
the next request's body could not be encoded (a `ModelError` the model never saw), a thread
commit or an AG-UI event could not be serialized. A server that sends one sent no character
there, so it is replaced by U+FFFD, as a UTF-8 decoder replaces bytes that are no character
(decision: the answer is kept, not refused; one bad character is no reason to lose it). The
mending itself is `network.utf8`'s, shared with the stores' encoding of records.
"""

from __future__ import annotations

import re

from network.utf8 import REPLACEMENT, utf8_json, utf8_text

__all__ = ["REPLACEMENT", "may_spell_surrogates", "utf8_json", "utf8_text"]

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def may_spell_surrogates(body: bytes) -> bool:
    """Whether JSON `body` may spell a surrogate (`\\ud800` to `\\udfff`): only then does
    its parsed form need `utf8_json` (a UTF-8 body cannot carry one any other way). Most
    servers send UTF-8 and no `\\u` escape at all: one scan for it answers them."""
    return b"\\u" in body and _SURROGATE_ESCAPE.search(body) is not None
