"""Principals: what an `authorize` hook answers becomes 401, 403, 500 or the caller."""

from __future__ import annotations

from typing import Any

import pytest

from network.serving.errors import RequestError
from network.serving.principals import Forbidden, Unauthorized, principal_of, store_user

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def refusal(hook: Any) -> RequestError:
    with pytest.raises(RequestError) as raised:
        await principal_of(hook, object(), "t1")
    return raised.value


async def test_a_hook_decides_who_the_caller_is() -> None:
    assert await principal_of(None, object(), "t1") is None  # no hook: anonymous
    assert await principal_of(lambda request, thread: "alice", object(), "t1") == "alice"

    async def later(request: Any, thread: str | None) -> str:
        return f"bob-{thread}"

    assert await principal_of(later, object(), None) == "bob-None"


async def test_what_a_hook_refuses_is_told_and_what_it_breaks_is_not() -> None:
    assert (await refusal(lambda r, t: None)).status == 401

    def unauthorized(request: Any, thread: str | None) -> str:
        raise Unauthorized("sign in first")

    def forbidden(request: Any, thread: str | None) -> str:
        raise Forbidden("admins only")

    def broken(request: Any, thread: str | None) -> str:
        raise KeyError("the session table's secret")

    told = await refusal(unauthorized)
    assert (told.status, told.code, told.message) == (401, "unauthorized", "sign in first")
    assert (await refusal(forbidden)).status == 403
    hidden = await refusal(broken)
    assert hidden.status == 500 and "secret" not in hidden.message
    for bad in ("", 42, ["alice"]):
        assert (await refusal(lambda r, t, bad=bad: bad)).status == 500


def test_a_principal_is_a_stores_user() -> None:
    assert store_user(None) == "" and store_user("alice") == "alice"
    with pytest.raises(RequestError) as raised:
        store_user("a\x00b")  # the application's hook at fault: a generic 500
    assert raised.value.status == 500 and "\x00" not in raised.value.message
