#!/usr/bin/env bash
# Runs the tests against the newest versions pyproject.toml's ranges allow, not the lock: the
# drift check. A release of litellm, pydantic, DBOS, the MCP SDK (or anything else we depend
# on) that breaks the library fails here before a user meets it, while CI and the README's
# test command stay reproducible on constraints.txt.
#
#   bash scripts/test-newest.sh                       # the whole suite
#   bash scripts/test-newest.sh -m dependency_drift   # the tests that lean on those libraries
#
# Arguments go to pytest. Everything happens in a throwaway virtual environment that sees the
# installed packages (--system-site-packages) and upgrades every dependency to its newest
# allowed version (`--upgrade-strategy eager`); nothing installed outside it changes. It needs
# PyPI and nothing else. llama-cpp-python, the real model server the tests start (a fixture,
# compiled from source, not a dependency of the library), stays at its pin. It prints which
# versions differ from the lock, then runs pytest, and exits with pytest's status.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"

workdir="$(mktemp -d)"
trap 'rm -rf "$workdir"' EXIT
"$PYTHON" -m venv --system-site-packages "$workdir/venv"
venv_python="$workdir/venv/bin/python"
grep -i '^llama-cpp-python==' constraints.txt > "$workdir/fixtures.txt" || true
"$venv_python" -m pip install --quiet --upgrade --upgrade-strategy eager \
  -c "$workdir/fixtures.txt" -e '.[test]'

"$venv_python" - <<'EOF'
"""Says which installed versions differ from constraints.txt: the drift being tested."""
import importlib.metadata as metadata

moved = []
for line in open("constraints.txt", encoding="utf-8"):
    if not line.strip() or line.startswith("#"):
        continue
    name, pinned = line.strip().split("==")
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        installed = "(not installed)"
    if installed != pinned:
        moved.append(f"  {name}: {pinned} (lock) -> {installed}")
print("newest allowed versions against constraints.txt:")
print("\n".join(moved) if moved else "  none: the lock is the newest")
EOF

"$venv_python" -m pytest "$@"
