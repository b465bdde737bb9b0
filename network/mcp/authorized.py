"""Every Streamable HTTP request to the MCP server authorized, and a session its opener's.

With an `authorize` hook, a tool call asks it for the call's thread; but a session is opened
by an `initialize` request, and a session is what a stranger can make the server hold (up to
`max_sessions`, `network.mcp.sessions`): were opening one not authorized, anyone who reaches
the endpoint could fill the sessions and lock out the clients the hook lets in. So
`AuthorizedSessions` asks the hook about every HTTP request (`POST`, the `GET` stream,
`DELETE`), with `thread_id` None (the request names no thread: as the A2A server asks for
each of its requests), before its body is read and before the SDK sees it:

- refused: answered as the server's other refusals, a JSON-RPC error with a null id at the
  refusal's status (401 `unauthorized`, with `WWW-Authenticate: Bearer` as HTTP requires of a
  401 and as the MCP specification's authorization asks of a server taking bearer tokens;
  403 `forbidden`; 500 `internal_error` when the hook itself fails, its text only logged).
  No session is opened, nothing is held.
- granted: the request goes on, its principal given to the SDK as the request's user
  (`scope["user"]`), and the SDK binds a session to the user whose request opened it. A
  request of another principal naming that session id is answered 404 `Session not found`,
  as a session that does not exist (as a thread of another principal is answered
  `thread_not_found`): knowing a session id alone reaches nothing.

The binding is the SDK's own (its `StreamableHTTPSessionManager` compares the
`AuthenticatedUser` of a request with the one that opened the session, and forgets the pair
with the session), so the server holds no map of its own that a stranger could grow.
"""

from __future__ import annotations

from typing import Any

from network.logger import LazyLogger
from network.mcp.sessions import send_refusal
from network.serving.errors import RequestError
from network.serving.principals import Authorize, principal_of

log = LazyLogger("agent_network.mcp")

CHALLENGE = {"www-authenticate": "Bearer"}  # a 401's answer says how to authenticate


def session_user(principal: str) -> Any:
    """The SDK's user for `principal`: what it compares to tell whose a session is. It holds
    the principal only (no token: the hook's credentials stay with the hook)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser  # noqa: PLC0415 (mcp)
    from mcp.server.auth.provider import AccessToken  # noqa: PLC0415 (mcp)

    return AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))


class AuthorizedSessions:
    """An ASGI wrapper of the SDK's Streamable HTTP app: every HTTP request authorized by
    `authorize(request, None)` first, refused as a JSON-RPC error when the hook refuses, and
    a session bound to the principal whose request opened it (module docstring)."""

    def __init__(self, app: Any, authorize: Authorize) -> None:
        self.app = app
        self.authorize = authorize

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.requests import Request  # noqa: PLC0415 (starlette: the SDK's)

        # the headers only: the body is not read before the caller is known (and a hook
        # that reads it would take it from the SDK)
        try:
            principal = await principal_of(self.authorize, Request(scope), None)
        except RequestError as refused:
            log.info("mcp.refused", code=refused.code, status=refused.status)
            await send_refusal(send, refused, CHALLENGE if refused.status == 401 else None)
            return
        if principal is not None:  # (always: with a hook, None is a 401)
            scope = {**scope, "user": session_user(principal)}
        await self.app(scope, receive, send)
