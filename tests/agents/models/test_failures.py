"""How failures are described and when retries wait: the pieces both model clients share."""

from __future__ import annotations

import email.utils
import time

import pytest

from agents.models._failures import http_failure, safe_url, server_message, transport_failure
from agents.models._openai_body import ToolsText, request_body
from agents.models._retry import backoff, retry_after
from agents.models.base import ModelRequest
from network.history.messages import UserMessage


def test_retry_after_reads_milliseconds_seconds_and_dates() -> None:
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "2"}) == 2.0
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after({"retry-after": when}) or 0) <= 30
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after": "3600"}) is None  # unreasonable: backoff instead
    assert retry_after({}) is None and retry_after(None) is None
    assert backoff(0.5, 0, 1.5) == 1.5
    assert 0.75 <= backoff(0.5, 1) <= 1.0


@pytest.mark.parametrize("attempt", [10, 12, 1024, 10**6])
def test_the_backoff_waits_at_most_a_minute_whatever_max_retries_is(attempt: int) -> None:
    """Uncapped, retry 13 of `max_retries=12` slept 0.5 * 2**11 s (17 minutes), and past
    1023 retries `2.0**attempt` raised OverflowError."""
    assert 45 <= backoff(0.5, attempt) <= 60


def test_http_failures_say_status_and_the_servers_words() -> None:
    auth = http_failure(401, b'{"error": {"message": "bad key", "type": "auth"}}')
    assert (auth.kind, auth.detail, auth.retryable) == (
        "authentication failed (HTTP 401)",
        "bad key",
        False,
    )
    assert http_failure(500, b'{"detail": "model crashed"}').describe() == "HTTP 500: model crashed"
    assert http_failure(429, b"").retryable and http_failure(503, b"x").retryable
    assert not http_failure(422, b"").retryable
    assert server_message(b"<html>" + b"x" * 1000).endswith("...")
    assert server_message('{"error": "plain string"}') == "plain string"


def test_the_most_telling_network_failure_wins() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except OSError as inner:
            raise RuntimeError("APIConnectionError: Connection error.") from inner
    except RuntimeError as outer:
        failure = transport_failure(outer)
    assert failure is not None and failure.kind == "connection refused" and failure.retryable
    assert transport_failure(ValueError("no network here")) is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:secret@host:8000/v1?key=abc#x", "http://host:8000/v1"),
        (
            "https://api.openai.com/v1/chat/completions",
            "https://api.openai.com/v1/chat/completions",
        ),
    ],
)
def test_urls_in_errors_carry_no_credentials(url: str, shown: str) -> None:
    assert safe_url(url) == shown


def test_a_stream_param_cannot_turn_streaming_off_or_on() -> None:
    request = ModelRequest([], [UserMessage("hi")], params={"stream": False, "model": "other"})
    streamed = request_body("m", request, {}, ToolsText(), stream=True)
    plain = request_body(
        "m",
        ModelRequest([], [UserMessage("hi")], params={"stream": True}),
        {},
        ToolsText(),
        stream=False,
    )
    assert b'"stream": true' in streamed and b'"model":"m"' in streamed and b"other" not in streamed
    assert b"stream" not in plain
