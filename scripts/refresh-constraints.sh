#!/usr/bin/env bash
# Refreshes constraints.txt, the lock file CI and the README's test command install with
# (`pip install -c constraints.txt -e '.[test]'`): the exact version of every package that
# `pip install -e '.[test]'` installs, as pip resolves it for a fresh machine today (nothing
# already installed is counted: `--ignore-installed`). Nothing is installed; pip only resolves
# (it may build llama-cpp-python's metadata, which takes a minute).
#
# Run it on purpose, then run the suite on the new pins before committing them:
#   bash scripts/refresh-constraints.sh && git diff constraints.txt
#   bash scripts/test-newest.sh   # the same newest versions, in a throwaway venv
# pyproject.toml keeps open ranges for users; only the test environment is pinned. The pins
# are for the interpreter and platform that resolve them (CI's: CPython 3.11 on Linux x86-64).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"

report="$(mktemp)"
trap 'rm -f "$report"' EXIT
# llama-cpp-python[server] is resolved with the test extra though not in it: the install script
# compiles it (portably) at the version pinned here.
"$PYTHON" -m pip install --quiet --dry-run --ignore-installed --report "$report" -e '.[test]' \
  'llama-cpp-python[server]'
"$PYTHON" - "$report" > constraints.txt <<'EOF'
"""Writes the resolved packages of a `pip install --report` as `name==version` lines."""
import json
import platform
import re
import sys
from datetime import datetime, timezone

with open(sys.argv[1], encoding="utf-8") as handle:
    report = json.load(handle)
pins = sorted(
    (re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower(), item["metadata"]["version"])
    for item in report["install"]
)
pins = [(name, version) for name, version in pins if name != "agent-network"]  # the package
today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
print(f"# The test environment's lock: what `pip install -e '.[test]'` resolved on {today}")
print(f"# for {platform.python_implementation()} {platform.python_version()} on "
      f"{platform.system()} {platform.machine()}. Refresh on purpose:")
print("#   bash scripts/refresh-constraints.sh   (then run the suite; docs/dependencies.md)")
print("# The package's own ranges (pyproject.toml) stay open for users.")
for name, version in pins:
    print(f"{name}=={version}")
EOF
echo "constraints.txt: $(grep -vc '^#' constraints.txt) pins" >&2
