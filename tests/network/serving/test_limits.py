"""What a stranger can make a server hold: bodies, ids and list sizes, refused clearly."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from network.serving.errors import RequestError
from network.serving.limits import (
    MAX_LIST_LIMIT,
    check_json_depth,
    check_run_id,
    check_thread_id,
    declared_over,
    list_limit,
    read_body,
)

pytestmark = pytest.mark.anyio


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_a_body_is_read_up_to_its_limit() -> None:
    assert await read_body(chunks(b"ab", b"cd"), None, 4) == b"abcd"
    with pytest.raises(RequestError) as streamed:
        await read_body(chunks(b"ab", b"cde"), None, 4)  # no length declared: counted
    assert streamed.value.status == 413 and streamed.value.code == "body_too_large"
    consumed: list[bytes] = []

    async def watched() -> AsyncIterator[bytes]:
        consumed.append(b"x")
        yield b"x"

    with pytest.raises(RequestError):
        await read_body(watched(), "5", 4)  # declared too large: nothing read
    assert consumed == []
    assert await read_body(chunks(b"abc"), "not a number", 4) == b"abc"


async def test_a_body_that_does_not_arrive_whole_in_time_is_408() -> None:
    # a client announcing a body and sending it a byte at a time (or never) was waited for
    # as long as it liked, holding its connection and what it had sent
    async def trickle() -> AsyncIterator[bytes]:
        yield b"{"
        await anyio.sleep(5)
        yield b"}"

    with pytest.raises(RequestError) as late:
        await read_body(trickle(), "2", 10, timeout=0.05)
    assert (late.value.status, late.value.code) == (408, "body_timeout")
    assert "0.05 seconds" in late.value.message
    assert await read_body(chunks(b"{}"), "2", 10, timeout=0.05) == b"{}"


@pytest.mark.parametrize("declared", ["9" * 5000, "1" + "0" * 30, "00005"])
async def test_a_declared_length_of_any_size_is_refused_as_too_large(declared: str) -> None:
    # more than 4,300 digits: `int` itself refuses them, which was a 500 with no JSON body
    with pytest.raises(RequestError) as refused:
        await read_body(chunks(b"x"), declared, 4)
    assert refused.value.code == "body_too_large"
    assert await read_body(chunks(b"abcd"), "0" * 5000 + "4", 4) == b"abcd"
    assert declared_over(declared, 4)  # the dev UI's reader asks the same


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "a\x1bb", "x" * 257, "a\ud800", 7, None])
def test_ids_follow_the_stores_rules_and_name_the_protocols_field(bad: object) -> None:
    with pytest.raises(RequestError) as thread:
        check_thread_id(bad, "contextId")
    assert (thread.value.status, thread.value.code, thread.value.key) == (
        422,
        "invalid_thread_id",
        "contextId",
    )
    assert "contextId" in thread.value.message
    with pytest.raises(RequestError) as run:
        check_run_id(bad, "runId")
    assert (run.value.code, run.value.key) == ("invalid_run_id", "runId")


def test_good_ids_pass_as_they_are() -> None:
    for good in ("t", "thread with spaces", "üñí-🧵", "x" * 256):
        assert check_thread_id(good) == good and check_run_id(good) == good


@pytest.mark.parametrize("bad", ["0", "-1", "1001", "abc", "²", "1" * 5000, ""])
def test_a_list_limit_is_a_small_positive_integer(bad: str) -> None:
    with pytest.raises(RequestError) as refused:
        list_limit(bad)
    assert refused.value.status == 422 and refused.value.key == "limit"


def test_list_limits_that_pass() -> None:
    assert list_limit(None) == 100
    assert list_limit("1") == 1 and list_limit(str(MAX_LIST_LIMIT)) == MAX_LIST_LIMIT


def test_json_is_refused_past_200_levels_not_past_201() -> None:
    check_json_depth(b"[" * 200 + b"]" * 200)
    check_json_depth(b'{"a": "' + b"[" * 500 + b'"}')  # brackets in a string nest nothing
    with pytest.raises(RequestError) as deep:
        check_json_depth(b"[" * 201 + b"]" * 201)  # pydantic's parser alone takes 201
    assert deep.value.status == 400 and deep.value.code == "invalid_json"
