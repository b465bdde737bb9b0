"""Who the dev UI serves: this machine's developer, or the principals an `authorize` hook names.

Without a hook the dev UI is a developer's tool on their own machine: every thread of the
network's app is listed and replayed, and the page may run as any user it names (the
`x-agent-network-user` header, `acting_user`). It binds loopback, and `agent-network dev`
refuses any other address without `--authorize`.

With `authorize` (the AG-UI server's hook: `authorize(request, thread_id)` returning the
caller's principal, or raising `Unauthorized` / `Forbidden`), the dev UI is no open door on a
real store: every data endpoint asks the hook first (401 / 403 as the hook decides), lists
only the principal's threads, and answers a thread of another user, or of another app, with
404 `thread_not_found`, exactly as a thread that does not exist; fork and rewind act only on
the principal's own threads; runs from the page go to the AG-UI server with the same hook,
and the user header is ignored (the principal is the hook's, never the page's).
"""

from __future__ import annotations

from typing import Any

from network.devui.http_errors import ParamError
from network.serving.errors import RequestError
from network.serving.principals import Authorize, principal_of, store_user


class Access:
    """The dev UI's rule for `app_name`'s threads (see the module docstring)."""

    def __init__(self, authorize: Authorize | None, app_name: str) -> None:
        self.authorize = authorize
        self.app_name = app_name

    @property
    def open(self) -> bool:
        """Whether everyone who reaches the server is served (no hook: a local tool)."""
        return self.authorize is None

    async def principal(self, request: Any, thread_id: str | None) -> str | None:
        """The caller (None without a hook), or the `ParamError` the hook's refusal is."""
        try:
            return await principal_of(self.authorize, request, thread_id)
        except RequestError as refused:
            raise ParamError(refused.status, refused.code, refused.message, refused.key) from None

    def user_filter(self, principal: str | None) -> dict[str, str]:
        """The `list_threads` arguments that keep to what the caller may see."""
        return {} if self.open else {"user_id": store_user(principal)}

    def check(self, thread: Any, principal: str | None, param: str) -> None:
        """A 404 (as for a missing thread) when the caller may not see `thread`."""
        if self.open or thread is None:
            return
        if thread.app_name != self.app_name or thread.user_id != store_user(principal):
            raise ParamError(404, "thread_not_found", "no such thread in the store", param)
