"""litellm's failures are read by what they mean, whatever litellm calls them.

litellm puts a `status_code` on every error, made up where there was no HTTP answer (a refused
connection, missing credentials, a stream that broke after its 200 are all "500" to it), and
its class names and texts change between releases (1.110 reports a stream without a finish
reason as `MidStreamFallbackError` wrapping `APIConnectionError`). The first half runs real
litellm against the fake server on 127.0.0.1; the second swaps `litellm.acompletion` for one
raising exceptions of invented classes, so the mapping is shown to rest on what an error holds
(an HTTP client's record of the answer, a transport error, the server's own words), not on names.
"""

from __future__ import annotations

import errno
from typing import Any

import httpx
import pytest

from agents import ModelRequest
from agents.models import litellm_model
from agents.models.litellm_model import LiteLLMModel
from network import ModelError, UserMessage
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs"), pytest.mark.litellm]


def request() -> ModelRequest:
    return ModelRequest([], [UserMessage("Say something.")])


def model(base_url: str, **options: Any) -> LiteLLMModel:
    options = {"api_key": "sk-test", "max_retries": 2, "retry_delay": 0.01, **options}
    return LiteLLMModel("openai/fake", api_base=base_url, **options)


async def ignore(chunk: Any) -> None:
    pass


# -- real litellm, fake server -------------------------------------------------------------


async def test_a_stream_without_a_finish_reason_is_no_answer_not_an_http_500(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add(*[Reply(text="Unfinished", finish=False)] * 3)
    with pytest.raises(ModelError, match="without a finish reason") as caught:
        await model(openai_server.base_url).complete(request(), ignore)
    error = caught.value
    assert error.status_code is None  # the server answered 200; no HTTP error happened
    assert "HTTP" not in str(error) and "litellm." not in str(error)
    assert len(openai_server.requests) == 1  # the same server would answer the same: no retry


async def test_an_error_the_server_sent_mid_stream_is_reported_in_its_words(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add(Reply(text="Broken", error_after=2))
    with pytest.raises(ModelError) as caught:
        await model(openai_server.base_url).complete(request(), ignore)
    message = str(caught.value)
    assert "the server reported an error mid-stream: fake server: the model crashed" in message
    assert caught.value.status_code is None
    assert "litellm." not in message and "HTTP 500" not in message


async def test_a_connection_cut_mid_stream_is_a_connection_failure(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add(Reply(text="Cut short", cut_after=3))
    with pytest.raises(ModelError, match="connection failed") as caught:
        await model(openai_server.base_url, max_retries=0).complete(request(), ignore)
    assert caught.value.status_code is None


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
async def test_a_status_the_server_answered_keeps_its_number_and_words(
    openai_server: FakeOpenAIServer, streamed: bool
) -> None:
    openai_server.add_error(503, "overloaded, try later").add_text("Fine now.")
    response = await model(openai_server.base_url).complete(request(), ignore if streamed else None)
    assert response.message.content == "Fine now."  # 503 is worth a retry
    openai_server.add_error(400, "messages: too long")
    with pytest.raises(ModelError, match=r"HTTP 400: messages: too long$") as caught:
        await model(openai_server.base_url).complete(request(), ignore if streamed else None)
    assert caught.value.status_code == 400


# -- invented exceptions: the mapping rests on meaning, not names --------------------------


class ProviderTrouble(Exception):
    """An exception of a class no litellm release has, carrying litellm's usual attributes."""

    def __init__(
        self, text: str, status_code: int = 500, original_exception: Exception | None = None
    ) -> None:
        super().__init__(text)
        self.status_code = status_code
        self.original_exception = original_exception


def raising(make: Any) -> Any:
    async def acompletion(**kwargs: Any) -> Any:
        raise make()

    return acompletion


@pytest.fixture
async def litellm() -> Any:
    """The litellm module the client calls (imported once), for `monkeypatch` to edit."""
    return await litellm_model.load_litellm()


def status_error(status: int, body: bytes) -> httpx.HTTPStatusError:
    call = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    answer = httpx.Response(status, content=body, request=call)
    return httpx.HTTPStatusError(f"{status}", request=call, response=answer)


async def test_a_made_up_status_over_a_transport_error_is_a_connection_failure(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cause = httpx.ReadError("peer closed the connection")
    monkeypatch.setattr(
        litellm, "acompletion", raising(lambda: ProviderTrouble("Connection error.", 500, cause))
    )
    with pytest.raises(ModelError, match="connection failed: ReadError") as caught:
        await model("http://127.0.0.1:9/v1", max_retries=0).complete(request())
    assert caught.value.status_code is None


async def test_a_refused_connection_is_known_by_its_errno(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = OSError(errno.ECONNREFUSED, "Connect call failed")  # no ConnectionRefusedError
    monkeypatch.setattr(
        litellm, "acompletion", raising(lambda: ProviderTrouble("trouble", 500, refused))
    )
    with pytest.raises(ModelError, match="connection refused") as caught:
        await model("http://127.0.0.1:9/v1", max_retries=0).complete(request())
    assert caught.value.status_code is None


async def test_the_status_the_server_answered_wins_over_the_one_litellm_reports(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def trouble() -> Exception:
        try:
            raise status_error(429, b'{"error": {"message": "slow down"}}')
        except httpx.HTTPStatusError as answered:
            raise ProviderTrouble("InternalServerError: something", 500) from answered

    calls: list[int] = []

    async def acompletion(**kwargs: Any) -> Any:
        calls.append(1)
        trouble()

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    with pytest.raises(ModelError, match="HTTP 429: slow down") as caught:
        await model("http://127.0.0.1:9/v1", max_retries=1).complete(request())
    assert caught.value.status_code == 429
    assert len(calls) == 2  # 429 is retried


async def test_a_wrapper_named_like_a_connection_error_is_not_one(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm raises `APIConnectionError` for anything it cannot map; only a transport error
    inside it makes a connection failure."""

    class APIConnectionError(Exception):
        status_code = 418

    monkeypatch.setattr(litellm, "acompletion", raising(lambda: APIConnectionError("odd")))
    with pytest.raises(ModelError) as caught:
        await model("http://127.0.0.1:9/v1", max_retries=0).complete(request())
    assert "connection failed" not in str(caught.value)
    assert caught.value.status_code == 418  # nothing better known: litellm's own status


async def test_missing_credentials_are_known_from_the_environment_not_the_text(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    calls: list[int] = []

    async def acompletion(**kwargs: Any) -> Any:
        calls.append(1)
        raise ProviderTrouble("InternalServerError: please configure things", 500)

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    no_key = LiteLLMModel("openai/fake", max_retries=3, retry_delay=30)
    with pytest.raises(ModelError, match="missing credentials.*OPENAI_API_KEY") as caught:
        await no_key.complete(request())
    assert caught.value.status_code is None
    assert calls == [1]  # never retried


@pytest.mark.parametrize(
    ("options", "said"),
    [
        # litellm's proxy route finds no key missing in the environment, and the openai SDK
        # under it refuses to build a client without one
        ({"api_key": None}, "request failed: OpenAIError"),
        ({"extra_body": object()}, "request failed: TypeError"),  # not JSON: never sent
    ],
    ids=["sdk-refuses-the-client", "unencodable-parameter"],
)
async def test_a_request_that_failed_before_it_was_sent_has_no_made_up_status(
    openai_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
    said: str,
) -> None:
    """litellm reports both as an HTTP 500 (`InternalServerError`, `APIConnectionError`): the
    error said "HTTP 500", its `status_code` was 500, and it was retried, for a request that
    never left the process."""
    monkeypatch.delenv("LITELLM_PROXY_API_KEY", raising=False)
    options = {"api_key": "sk-test", "max_retries": 2, "retry_delay": 0.01, **options}
    proxied = LiteLLMModel("litellm_proxy/fake", api_base=openai_server.base_url, **options)
    with pytest.raises(ModelError, match=said) as caught:
        await proxied.complete(request())
    assert caught.value.status_code is None
    assert "HTTP 500" not in str(caught.value)
    assert len(caught.value.attempts) == 1  # never retried
    assert openai_server.requests == []


async def test_an_answer_litellm_could_not_read_is_not_a_made_up_http_500(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm's groq route, on a server that is not Groq's, fails reading the 200 it got
    (`'ModelResponse' object has no attribute 'service_tier'`) and reports it as an
    `APIConnectionError` with status 500: the error said "HTTP 500" and was retried."""
    calls: list[int] = []

    async def acompletion(**kwargs: Any) -> Any:
        calls.append(1)
        unreadable = AttributeError("'ModelResponse' object has no attribute 'service_tier'")
        raise ProviderTrouble("APIConnectionError: GroqException - ...", 500, unreadable)

    monkeypatch.setattr(litellm, "acompletion", acompletion)
    with pytest.raises(ModelError, match="request failed: AttributeError: 'ModelResp") as caught:
        await model("http://127.0.0.1:9/v1").complete(request())
    assert caught.value.status_code is None
    assert calls == [1]  # the same answer would fail the same way: not retried
