"""The dev server's answers that are not the page's: security headers and JSON errors.

Errors have the AG-UI server's shape, `{"error": {"code", "message", "key"?}}`. A failing
store answers 500 `store_failed` with only a reference; the exception is logged with it.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from network.logger import LazyLogger
from network.serving.screening import store_failure

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}

log = LazyLogger("agent_network.devui")


class ParamError(Exception):
    """A request the server refuses: its HTTP status, error code, message and the key at fault."""

    def __init__(self, status: int, code: str, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.key = status, code, message, key

    def response(self) -> Response:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.key is not None:
            error["key"] = self.key
        # ASCII JSON: a key the request named may hold a lone surrogate (refused for that),
        # which has no UTF-8 form; escaped, it is answered as sent instead of failing the
        # answer (JSONResponse writes UTF-8 and raised UnicodeEncodeError: a 500)
        return Response(
            json.dumps({"error": error}),
            status_code=self.status,
            headers=SECURITY_HEADERS,
            media_type="application/json",
        )


def store_failed(operation: str, error: BaseException) -> Response:
    """500 `store_failed` with a reference; the exception goes to the server's log only."""
    failure = store_failure(operation, error, log, "devui.store_failed")
    return ParamError(failure.status, failure.code, failure.message).response()
