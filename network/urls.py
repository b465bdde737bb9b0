"""Whether a text is an http(s) URL a client can send a request to.

Shared by what checks a URL when it is given (an `A2AModel`'s remote, the URL an A2A app
publishes in its agent card), so the two refuse the same texts."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit


def is_http_url(url: Any) -> bool:
    """True when `url` is a string holding an http or https URL with a host and a valid port,
    and no whitespace or control character (which no request line can carry)."""
    if not isinstance(url, str) or any(c.isspace() or not c.isprintable() for c in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host)
