"""Only JSON bodies run.

Browsers send `text/plain`, `application/x-www-form-urlencoded` and `multipart/form-data`
bodies cross-site without a CORS preflight, so a page on any origin could start runs with a
visitor's cookies. `application/json` always needs a preflight, which CORS then decides.
"""

from __future__ import annotations

from network.serving.errors import RequestError

JSON = "application/json"


def check_content_type(header: str | None) -> None:
    """A 415 `RequestError` unless `header` is `application/json` (parameters allowed)."""
    media_type = (header or "").split(";", 1)[0].strip().lower()
    if media_type != JSON:
        shown = media_type or "none"
        raise RequestError(
            415,
            "unsupported_media_type",
            f"request body must be {JSON}, got content-type {shown}",
        )
