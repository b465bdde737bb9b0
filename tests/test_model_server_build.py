"""The real model server the suite uses is built to run on any x86-64 CPU, and its install
ends with one real completion that fails loudly when it cannot.

`scripts/install-test-deps.sh` compiles llama-cpp-python with GGML_NATIVE=OFF (x86-64-v3 at
most: no AVX-512, no AMX), records the flags beside the package, and runs
`scripts/check_model_server.py`. A native build made on an AVX-512 / AMX machine dies with a
general protection fault on its first completion there; these tests hold the build to the
portable instruction sets, and the check to saying so when a server crashes.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "scripts" / "check_model_server.py"


def llama_package() -> Path:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llama-cpp-python is not installed: run `bash scripts/install-test-deps.sh`")
    return Path(spec.submodule_search_locations[0])


def test_the_install_recorded_a_portable_build() -> None:
    marker = llama_package() / "PORTABLE_BUILD"
    assert marker.exists(), "llama-cpp-python was not built by scripts/install-test-deps.sh"
    flags = marker.read_text().split()
    assert "-DGGML_NATIVE=OFF" in flags
    for beyond in ("-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF"):
        assert beyond in flags


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 instruction sets only")
def test_the_model_server_library_uses_no_avx512_or_amx() -> None:
    # A native build on an AVX-512 / AMX machine uses zmm, mask and tile registers; a
    # portable one never does, whatever CPU built it.
    library = next((llama_package() / "lib").glob("libggml-cpu.so*"))
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    beyond = [
        line
        for line in listing.splitlines()
        if "%zmm" in line or "%tmm" in line or "tileload" in line or "{%k" in line
    ]
    assert beyond == [], beyond[:5]


@pytest.mark.heavy
def test_the_check_answers_with_one_real_completion() -> None:
    done = subprocess.run(
        [sys.executable, str(CHECK)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "answered a completion" in done.stdout


def test_a_server_that_crashes_on_its_first_completion_fails_the_check_saying_so(
    tmp_path: Path,
) -> None:
    # A stand-in `llama_cpp.server` that starts, lists its model, and dies as the broken
    # build does (a segmentation fault) when asked for a completion.
    server = tmp_path / "llama_cpp" / "server"
    server.mkdir(parents=True)
    (tmp_path / "llama_cpp" / "__init__.py").write_text("")
    (server / "__init__.py").write_text("")
    (server / "__main__.py").write_text(
        textwrap.dedent(
            """
            import http.server, os, signal, sys
            port = int(sys.argv[sys.argv.index("--port") + 1])
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
                    self.end_headers()
                    self.wfile.write(b'{"data": []}')
                def do_POST(self):
                    os.kill(os.getpid(), signal.SIGSEGV)
                def log_message(self, *args):
                    pass
            http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
            """
        )
    )
    environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(CHECK)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=environment,
    )
    assert done.returncode == 1
    assert "signal 11 (SIGSEGV)" in done.stderr
    assert "on its first completion" in done.stderr
    assert "FORCE_LLAMA_REBUILD=1 bash scripts/install-test-deps.sh" in done.stderr
