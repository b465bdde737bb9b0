"""mypy checks that `Network[Deps]`, `RunContext[Deps]` and `ToolContext[Deps]` type `deps`.

`deps_typed.py` is also in the project's mypy `files`, so this reuses mypy's cache when the
project was just checked (`.ci/run` runs `mypy` first): the cache of the project's root, named
here, from whatever folder pytest runs in (cold, the check takes minutes of CPU).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.heavy
def test_deps_keep_their_type_through_network_router_and_tool_contexts() -> None:
    from mypy import api  # here: every worker collects this file, one runs it

    root = HERE.parent.parent
    # mypy's main raises the interpreter's recursion limit (to 2**14) and leaves it so: put it
    # back, or every later test in this worker parses JSON 16 times deeper than a server
    # would (the tests of bodies nested past the limit then passed the body as sound JSON)
    limit = sys.getrecursionlimit()
    try:
        stdout, stderr, status = api.run(
            [
                *("--config-file", str(root / "pyproject.toml")),
                *("--cache-dir", str(root / ".mypy_cache")),
                str(HERE / "deps_typed.py"),
            ]
        )
    finally:
        sys.setrecursionlimit(limit)
    assert status == 0, stdout + stderr
