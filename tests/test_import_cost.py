"""`import network, agents, routers` stays light: what it must not load, checked in a fresh process.

The import time itself is a benchmark (benchmarks/import_time.py), never asserted. What is
asserted is its structure: pydantic (most of the cost once was building models at import),
the model clients' HTTP stack, thread stores, servers, telemetry SDKs and optional extras are
loaded when first used, not when the packages are imported.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DEFERRED = (
    "pydantic",  # models, TypeAdapters and tool schemas are built on first use
    "pydantic_core",
    "email",  # pydantic's plugin loader (importlib.metadata) and Retry-After dates
    "importlib.metadata",
    "httpx",
    "aiohttp",  # the native model client's transport
    "yarl",
    "multidict",
    "litellm",
    "asyncio",  # anyio's backend loads with the first run
    "ssl",
    "network.threads",  # thread stores: only runs on a thread load them
    "sqlalchemy",
    "aiosqlite",
    "asyncpg",
    "starlette",
    "fastapi",
    "uvicorn",
    "ag_ui",
    "network.agui",
    "network.serving",
    "network.cli",
    "mcp",
    "dbos",
    "opentelemetry",
    "structlog",
    "rich",
    "networkx",
    "jsonpatch",
)


def _loaded_after(code: str) -> list[str]:
    """The DEFERRED modules present in `sys.modules` after running `code` in a new interpreter."""
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {DEFERRED!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_importing_the_three_packages_loads_none_of_the_deferred_modules() -> None:
    assert _loaded_after("import network, agents, routers") == []


def test_every_public_name_imports_without_them_too() -> None:
    code = (
        "import network, agents, routers\n"
        "for package in (network, agents, routers):\n"
        "    for name in package.__all__:\n"
        "        getattr(package, name)\n"
    )
    assert _loaded_after(code) == []


def test_a_schema_with_a_typed_key_loads_pydantic_when_it_is_built() -> None:
    # The deferral is real, not a lost feature: the first typed key brings pydantic in.
    code = "from network import StateSchema\nStateSchema({'n': {'type': int}})"
    assert "pydantic" in _loaded_after(code)


def test_the_a2a_task_records_load_without_the_a2a_server() -> None:
    """A process that only keeps A2A task records on a store (`network.a2a.tasks`: six of them
    in tests/network/threads/test_setup_race.py) does not load the server's FastAPI: the
    package `network.a2a` loads `app` and `agent_card` when first used."""
    assert "fastapi" not in _loaded_after("import network.a2a.tasks")
    assert "fastapi" in _loaded_after("from network.a2a import app")
