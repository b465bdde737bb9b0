"""What real model servers do that the protocol does not say, met by the native client.

- A stream that ends without a finish reason, after the server said something outside the
  protocol: the error carries its words. llama.cpp's `error: {...}` line is an error.
- Transport guarantees of the aiohttp-based client: a cancelled call leaks no connection;
  a finished event loop's connections are closed; the environment's proxy is honoured.

The fake server (tests.fakes.openai_server) plays each server's part. (A server refusing
`response_format`: tests/agents/models/test_response_format.py.)
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents import OpenAIModel
from agents.models._http_pool import _proxy_for
from network import ModelError, SystemMessage, UserMessage
from tests.fakes.openai_server import FakeOpenAIServer, Reply

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

ROOT = Path(__file__).resolve().parents[3]


def model_on(server: FakeOpenAIServer, **options: Any) -> OpenAIModel:
    options = {"max_retries": 2, "retry_delay": 0.01, **options}
    return OpenAIModel("openai/fake", api_base=server.base_url, **options)


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
        taken = len(openai_server.requests) + 1
        async with anyio.create_task_group() as calls:
            calls.start_soon(model.complete, ask())
            # cancelled once the server holds its reply: cancelled earlier (a loaded machine),
            # the request never arrives and its reply would answer the next call
            with anyio.fail_after(10):
                while len(openai_server.requests) < taken:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.1)  # the first chunks reach the client
            calls.cancel_scope.cancel()
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
