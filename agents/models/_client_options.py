"""The options every HTTP client takes that say where and how it sends: checked when the model
is made, naming the model and the option.

`stream=` decides streaming by its truth: `stream="false"` (from a config file or a model
described as data) streamed every request. `api_base=` was used as given: a number failed with
`AttributeError` inside the client, `""` was taken for no `api_base` (the provider's public
endpoint, where the prompt was sent with the provider's key), and a base without `http://` or
`https://` failed only at the first call. `api_key=` goes into a header: a line break there
failed every call with aiohttp's "header injection" error, one with an accent or a lone
surrogate (a key pasted with typographic quotes) failed every call through litellm as a made-up
"HTTP 500", retried. The model name itself (`OpenAIModel(None)` was an `AttributeError`, `""`
or `"openai/"` sent a blank name, a lone surrogate failed every call as "request failed:
UnicodeEncodeError") is checked by `check_model_name`. Each is refused here instead.

`headers=` and `token=` (the A2A model's) go into httpx's headers, which take ASCII only: a
token with a line break failed every call as "could not be reached", one with an accent as
"sent what is not A2A" (blaming the remote), a header value that is a number with a
`TypeError`. `check_headers` and `check_token` refuse them when the model is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from network.errors import ConfigurationError

_CONTROL = {chr(code) for code in range(32)} | {"\x7f"}


def check_model_name(model: Any) -> str:
    """The model string: text that is not blank, nor blank after its provider's `/`, with no
    control character and a UTF-8 form (it is sent in every request body)."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigurationError(
            f"a model client takes a model name such as 'openai/gpt-4o-mini', got {model!r}"
        )
    if any(char in _CONTROL for char in model) or not _has_utf8_form(model):
        raise ConfigurationError(
            f"model {model!r}: the model name holds a control character or a lone surrogate, "
            "which no request can carry"
        )
    prefix, slash, name = model.partition("/")
    if slash and not name.strip():
        raise ConfigurationError(
            f"model {model!r}: no model name after {prefix + '/'!r} (e.g. '{prefix}/<name>')"
        )
    return model


def _has_utf8_form(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def check_stream(model: str, stream: Any) -> bool | None:
    """`stream=`: None, True or False."""
    if stream is not None and not isinstance(stream, bool):
        raise ConfigurationError(
            f"model {model!r}: stream must be True, False or None (stream when the caller "
            f"takes deltas), got {stream!r}"
        )
    return stream


def check_api_base(model: str, api_base: Any) -> str | None:
    """`api_base=`: None, or an `http://` or `https://` URL with a host."""
    if api_base is None:
        return None
    if not isinstance(api_base, str):
        raise ConfigurationError(
            f"model {model!r}: api_base must be a URL string, got {type(api_base).__name__}"
        )
    if any(char in _CONTROL or char.isspace() for char in api_base):
        raise ConfigurationError(
            f"model {model!r}: api_base must be a URL without spaces or control characters"
        )
    try:
        parts = urlsplit(api_base)
        host = parts.hostname
    except ValueError:  # a bad port or IPv6 literal
        host, parts = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise ConfigurationError(
            f"model {model!r}: api_base must be an http:// or https:// URL with a host "
            "(e.g. http://127.0.0.1:8000/v1)"
        )
    return api_base


def check_api_key(model: str, api_key: Any) -> str | None:
    """`api_key=`: None, or a string a header can carry (the key itself is never shown)."""
    if api_key is None:
        return None
    if not isinstance(api_key, str):
        raise ConfigurationError(
            f"model {model!r}: api_key must be a string, got {type(api_key).__name__}"
        )
    if any(char in _CONTROL for char in api_key):
        raise ConfigurationError(
            f"model {model!r}: api_key holds a line break or control character, which no "
            "HTTP header can carry"
        )
    if not api_key.isascii():  # no provider's key has one: a paste with quotes or an accent
        raise ConfigurationError(
            f"model {model!r}: api_key holds a character past ASCII (a typographic quote, an "
            "accent, a lone surrogate), which no provider's key has and httpx cannot send"
        )
    return api_key


# RFC 9110's token characters: what a header name is made of
_NAME_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


_SHOWN_NAME = 100  # the most of a refused header name an error repeats


def _ascii_printable(text: str, *, spaces: bool) -> bool:
    low = " " if spaces else "!"
    return all(low <= char <= "~" or (spaces and char == "\t") for char in text)


def check_headers(owner: str, headers: Any) -> dict[str, str]:
    """`headers=`: None, or a mapping of header names to ASCII values; else a
    `ConfigurationError` naming `owner` (`"model 'x'"`, `"MCP server 'x'"`) and the header.
    A value is never shown: it may be a key."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise ConfigurationError(
            f"{owner}: headers must be a mapping of names to values, got {type(headers).__name__}"
        )
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not name or not set(name) <= _NAME_CHARS:
            shown = name[:_SHOWN_NAME] if isinstance(name, str) else name
            raise ConfigurationError(
                f"{owner}: headers: {shown!r} is not an HTTP header name (letters, digits and "
                "!#$%&'*+-.^_`|~)"
            )
        if not isinstance(value, str):
            raise ConfigurationError(
                f"{owner}: headers[{name!r}] must be a string, got {type(value).__name__}"
            )
        # h11 refuses a value starting or ending with a space or tab too (a token read from a
        # file with its line break, stripped of it but for a space, is the common case)
        if not _ascii_printable(value, spaces=True) or value != value.strip(" \t"):
            raise ConfigurationError(
                f"{owner}: headers[{name!r}] holds a line break, a control character, a "
                "character past ASCII or a space at either end, which the HTTP client cannot "
                "send (the value is not shown)"
            )
        checked[name] = value
    return checked


def check_token(model: str, token: Any) -> str | None:
    """`token=`: None, or a bearer token, visible ASCII (the token itself is never shown)."""
    if token is None:
        return None
    if not isinstance(token, str):
        raise ConfigurationError(
            f"model {model!r}: token must be a string, got {type(token).__name__}"
        )
    if not token or not _ascii_printable(token, spaces=False):
        raise ConfigurationError(
            f"model {model!r}: token must be a non-empty bearer token of visible ASCII "
            "characters (no spaces, line breaks or accents; None sends no token)"
        )
    return token
