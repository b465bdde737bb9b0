"""An `authorize` hook from a token file: bearer tokens, each naming its principal.

    # tokens.txt: one "PRINCIPAL TOKEN" a line; '#' starts a comment (at a word's start:
    # inside a token, it is one of the token's characters)
    alice  3f6c1b0e9a4d47e2b1c5d8e7f6a9b0c1
    bob    9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a

    authorize = token_file_authorize("tokens.txt")   # agent-network serve --token-file

A request's `Authorization: Bearer <token>` names its principal; a request without one, or
with a token the file does not hold, is 401. Tokens are compared in constant time, as sha256
digests (equal lengths whatever was offered: the time tells neither a token nor its length), and
the file is checked when it is read: a token shorter than `MIN_TOKEN_CHARS`, a token with a
character other than printable ASCII (a header carries bytes: a client's UTF-8 `é` arrives as
two other characters, and such a token never matched), a token given twice, a principal no
thread store can keep or a line that is not two words is a `ConfigurationError` naming the
line (never the token).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path
from typing import Any

from network.errors import ConfigurationError, InvalidIdError
from network.serving.principals import Authorize, Unauthorized
from network.threads.ids import check_id

__all__ = ["read_tokens", "token_file_authorize"]

MIN_TOKEN_CHARS = 16
_COMMENT = re.compile(r"(?:^|\s)#")  # a `#` inside a word is part of it (a token's character)


def read_tokens(path: str | Path) -> dict[str, str]:
    """The token file's tokens, each with its principal (module docstring)."""
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"token file {source}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")  # a byte order mark (an editor's) is not text
    except UnicodeDecodeError as exc:  # the line, never its bytes: they may be a token's
        number = data.count(b"\n", 0, exc.start) + 1
        raise ConfigurationError(f"token file {source}, line {number}: not UTF-8 text") from None
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        words = _COMMENT.split(line, maxsplit=1)[0].split()
        if not words:
            continue
        where = f"token file {source}, line {number}"
        if len(words) != 2:
            raise ConfigurationError(f"{where}: expected 'PRINCIPAL TOKEN'")
        principal, token = words
        try:
            check_id("principal", principal)
        except InvalidIdError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
        if len(token) < MIN_TOKEN_CHARS:
            raise ConfigurationError(f"{where}: a token needs {MIN_TOKEN_CHARS} characters or more")
        if not all("!" <= char <= "~" for char in token):  # its characters are never named
            raise ConfigurationError(
                f"{where}: a token is printable ASCII characters only (a client's header "
                "carries it as bytes: any other character would never match)"
            )
        if token in tokens:
            raise ConfigurationError(f"{where}: this token is already given on another line")
        tokens[token] = principal
    if not tokens:
        raise ConfigurationError(f"token file {source} holds no token")
    return tokens


def token_file_authorize(path: str | Path) -> Authorize:
    """An `authorize(request, thread_id)` hook granting the principal of the request's bearer
    token in the file at `path` (read once, now)."""
    known = [(_digest(token.encode()), principal) for token, principal in read_tokens(path).items()]

    def authorize(request: Any, thread_id: str | None) -> str:
        header = request.headers.get("authorization", "") if request is not None else ""
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise Unauthorized("a bearer token is needed (Authorization: Bearer <token>)")
        offered = _digest(given.strip().encode())
        found = None
        for token, principal in known:  # every token compared: the time tells nothing
            # digests, not the strings: compare_digest returns at once on unequal lengths,
            # which would time out a token's length
            if hmac.compare_digest(token, offered):
                found = principal
        if found is None:
            raise Unauthorized("unknown token")
        return found

    return authorize


def _digest(token: bytes) -> bytes:
    """A token's fixed-length stand-in for comparing (sha256: 32 bytes whatever its length)."""
    return hashlib.sha256(token).digest()
