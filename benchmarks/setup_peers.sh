#!/usr/bin/env bash
# Create the isolated environments of the peer frameworks the benchmarks compare against.
# Nothing here becomes a dependency of agent-network: the Python peers go into their own venv
# (benchmarks/.venv-peers, gitignored) and AgentKit into benchmarks/peers/agentkit/node_modules.
#
#   bash benchmarks/setup_peers.sh            # both
#   bash benchmarks/setup_peers.sh python     # only the Python venv
#   bash benchmarks/setup_peers.sh node       # only AgentKit
#   bash benchmarks/setup_peers.sh agui       # the AG-UI servers of agui_served.py: pydantic-ai
#                                             # and Microsoft Agent Framework, a venv each
#
# PYTHON selects the interpreter for the venv (default: python3.11, else python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
what="${1:-all}"
status=0

setup_python() {
    local py="${PYTHON:-}"
    if [[ -z "$py" ]]; then
        py="$(command -v python3.11 || command -v python3)"
    fi
    local venv="$here/.venv-peers"
    echo "== Python peers -> $venv (using $py)"
    if [[ ! -x "$venv/bin/python" ]]; then
        "$py" -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r "$here/peers/requirements.txt"
    "$venv/bin/python" - <<'EOF'
from importlib.metadata import version
for name in ("langgraph", "langchain-core", "langchain-openai", "haystack-ai", "openai-agents",
             "openai"):
    print(f"   {name}=={version(name)}")
EOF
}

setup_node() {
    local dir="$here/peers/agentkit"
    echo "== AgentKit -> $dir/node_modules"
    if ! command -v npm >/dev/null 2>&1; then
        echo "   npm not found: AgentKit skipped" >&2
        return 1
    fi
    # --ignore-scripts: nothing AgentKit needs at run time is built by an install script.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "   node $(node --version), @inngest/agent-kit $(node -p \
        "require('$dir/node_modules/@inngest/agent-kit/package.json').version")"
}

setup_agui() {
    local py="${PYTHON:-}"
    if [[ -z "$py" ]]; then
        py="$(command -v python3.11 || command -v python3)"
    fi
    local name
    for name in pydantic-ai agent-framework; do
        local venv="$here/.venv-agui-$name"
        echo "== AG-UI server of $name -> $venv"
        if [[ ! -x "$venv/bin/python" ]]; then
            "$py" -m venv "$venv"
        fi
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            -r "$here/peers/requirements-agui-$name.txt"
    done
}

case "$what" in
    all)
        setup_python || status=1
        setup_node || status=1
        ;;
    python) setup_python ;;
    node) setup_node ;;
    agui) setup_agui ;;
    *)
        echo "usage: $0 [all|python|node|agui]" >&2
        exit 2
        ;;
esac
exit "$status"
