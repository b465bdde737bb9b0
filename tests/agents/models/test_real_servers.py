"""What real model servers do that the protocol does not say, met by the native client.

- llama-cpp-python's server refuses `response_format` with a JSON schema (500 and a
  validation message): `output_mode="auto"` falls back to tool mode at once, no retries.
- A stream that ends without a finish reason, after the server said something outside the
  protocol: the error carries its words. llama.cpp's `error: {...}` line is an error.
- Transport guarantees of the aiohttp-based client: a cancelled call leaks no connection;
  a finished event loop's connections are closed; the environment's proxy is honoured.

The fake server (tests.fakes.openai_server) plays each server's part; the llama.cpp server
(tests.fakes.llama_server, SmolLM2) shows the fallback for real.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agents import Agent, OpenAIModel
from agents.models.http_pool import _proxy_for
from agents.models.response_format import ResponseFormatRefused
from network import ModelError, OutputValidationError, SystemMessage, UserMessage
from tests.fakes.llama_server import LlamaServer
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytest_plugins = ["tests.fakes.openai_server", "tests.fakes.llama_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

ROOT = Path(__file__).resolve().parents[3]

# What llama-cpp-python 0.3 answers to `response_format: {"type": "json_schema", ...}`.
LLAMA_CPP_PYTHON_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


class City(BaseModel):
    name: str
    country: str


def model_on(server: FakeOpenAIServer, **options: Any) -> OpenAIModel:
    options = {"max_retries": 2, "retry_delay": 0.01, **options}
    return OpenAIModel("openai/fake", api_base=server.base_url, **options)


# -- response_format refused ---------------------------------------------------------------


async def test_auto_mode_falls_back_to_tool_mode_without_retrying(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    openai_server.add_tool_calls(("final_output", {"name": "Paris", "country": "France"}))
    openai_server.add_tool_calls(("final_output", {"name": "Rome", "country": "Italy"}))
    model = model_on(openai_server)
    agent = Agent("geo", model=model, output_type=City)

    first = await agent.run("Capital of France?")
    assert first.results[-1].output_value == City(name="Paris", country="France")
    refused, fallback = openai_server.requests  # one refusal, no retry of it
    assert refused["response_format"]["type"] == "json_schema"
    assert "response_format" not in fallback
    assert [t["function"]["name"] for t in fallback["tools"]] == ["final_output"]

    second = await agent.run("Capital of Italy?")  # remembered: straight to tool mode
    assert second.results[-1].output_value == City(name="Rome", country="Italy")
    assert len(openai_server.requests) == 3
    assert "response_format" not in openai_server.requests[2]


async def test_native_mode_asked_for_says_the_server_refused_it(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, LLAMA_CPP_PYTHON_REFUSAL)
    agent = Agent("geo", model=model_on(openai_server), output_type=City, output_mode="native")
    with pytest.raises(ResponseFormatRefused, match="response_format") as caught:
        await agent.run("Capital of France?")
    assert isinstance(caught.value, ModelError) and caught.value.status_code == 500
    assert len(openai_server.requests) == 1  # not retried


async def test_a_500_that_is_not_about_response_format_is_still_retried(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_error(500, "the GPU fell over")
    openai_server.add_text('{"name": "Paris", "country": "France"}')
    agent = Agent("geo", model=model_on(openai_server), output_type=City)
    result = await agent.run("Capital of France?")
    assert result.results[-1].output_value == City(name="Paris", country="France")
    assert all("response_format" in r for r in openai_server.requests)  # native both times


async def test_llama_cpp_python_refuses_json_schema_and_the_agent_still_answers(
    llama_server: LlamaServer,
) -> None:
    # What a 135M model answers is not asserted: the outcome is a City or a clear
    # OutputValidationError, never the server's 500 retried until the run fails.
    model = OpenAIModel(
        "openai/smollm2", api_base=llama_server.base_url, temperature=0.0, max_tokens=60, seed=7
    )
    agent = Agent("geo", model=model, output_type=City, output_retries=1)
    with anyio.fail_after(120):
        try:
            result = await agent.run("Paris is the capital of France. Give the city and country.")
        except OutputValidationError as exc:  # the model's tool-mode answer did not validate
            assert exc.attempts == 2
        else:
            assert isinstance(result.results[-1].output_value, City)
    assert model.refuses_response_format  # the real server refused; the agent moved on


# -- what the server said ------------------------------------------------------------------


async def test_an_unfinished_stream_says_what_the_server_said(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add(Reply(text="Half an", finish=False, said="upstream: CUDA out of memory"))
    with pytest.raises(ModelError) as caught:
        await model_on(openai_server, max_retries=0, stream=True).complete(ask())
    text = str(caught.value)
    assert "without a finish reason" in text and "CUDA out of memory" in text


async def test_llama_cpps_error_line_is_the_error(openai_server: FakeOpenAIServer) -> None:
    said = 'error: {"code": 500, "message": "context size exceeded", "type": "server_error"}'
    openai_server.add(Reply(text="Half", finish=False, said=said))
    with pytest.raises(ModelError, match="context size exceeded"):
        await model_on(openai_server, max_retries=0, stream=True).complete(ask())


def ask() -> Any:
    from agents import ModelRequest

    return ModelRequest([SystemMessage("Be brief.")], [UserMessage("Hi")])


# -- the transport -------------------------------------------------------------------------


def client_connections(server_port: int) -> int:
    """ESTABLISHED TCP connections of this machine whose far end is the server's port: the
    client's side of each connection (the server's own sockets have it as the near end)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote, state = fields[2], fields[3]
            if state == "01" and int(remote.rsplit(":", 1)[1], 16) == server_port:
                count += 1
    return count


async def test_a_cancelled_stream_leaks_no_connection(openai_server: FakeOpenAIServer) -> None:
    port = int(openai_server.base_url.rsplit(":", 1)[1].split("/")[0])
    model = model_on(openai_server, max_retries=0, stream=True)
    openai_server.add_text("Warm.")
    await model.complete(ask())
    pooled = client_connections(port)  # the one kept alive for the next call
    for _ in range(5):
        openai_server.add(Reply(text="Never finished", hold_after=2, hold_timeout=5))
        with anyio.move_on_after(0.3):
            await model.complete(ask())
    await anyio.sleep(0.2)
    assert client_connections(port) <= pooled  # every cancelled call closed its connection
    openai_server.release()
    openai_server.add_text("Still works.")
    response = await model.complete(ask())
    assert response.message.content == "Still works."


def test_a_finished_event_loop_leaves_no_connection_open(tmp_path: Path) -> None:
    # A program calling anyio.run (network.run_sync) again and again: each loop's pooled
    # connections are closed when that loop shuts down.
    script = textwrap.dedent(
        """
        import sys
        import anyio
        sys.path.insert(0, sys.argv[1])
        from tests.fakes.openai_server import FakeOpenAIServer
        from tests.agents.models.test_real_servers import ask, client_connections
        from agents import OpenAIModel

        with FakeOpenAIServer() as server:
            port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
            model = OpenAIModel("openai/fake", api_base=server.base_url, max_retries=0)
            for _ in range(3):
                server.add_text("Hi.")
                anyio.run(model.complete, ask())
            print(client_connections(port))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0"
    assert "Unclosed" not in done.stderr


def test_the_environments_proxy_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert _proxy_for("https://api.example.com/v1") == "http://proxy.internal:3128"
    assert _proxy_for("http://127.0.0.1:8000/v1") is None  # NO_PROXY


async def test_a_value_error_of_the_callers_own_passes_through(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_text("Some text.")

    async def on_chunk(chunk: Any) -> None:
        raise ValueError("consumer's own")

    with pytest.raises(ValueError, match="consumer's own"):
        await model_on(openai_server).complete(ask(), on_chunk)
    assert len(openai_server.requests) == 1  # not taken for the stream's failure, not retried


async def test_a_stream_line_past_the_limit_fails_the_stream(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.models import openai_native

    monkeypatch.setattr(openai_native, "_MAX_LINE", 64)  # a chunk is longer than that
    openai_server.add_text("A text whose chunk lines are longer than 64 bytes.")
    with pytest.raises(ModelError, match="stream failed"):
        await model_on(openai_server, max_retries=0, stream=True).complete(ask())
