"""`import routers` stays light: networkx and litellm load only when first needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
import routers
from agents import ScriptedModel, call
from network import Network
from tests.routers.helpers import scripted_agent

assert "networkx" not in sys.modules, "import routers loaded networkx"
model = ScriptedModel([call("select_agent", name="a"), call("done", summary="ok")])
Network("n", agents=[scripted_agent("a")], router=routers.routing_agent(model)).run_sync("x")
assert "litellm" not in sys.modules, "the routing agent loaded litellm"
routers.GraphRouter(start="a")
assert "networkx" in sys.modules
"""


def test_networkx_and_litellm_are_imported_lazily() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],  # the repository root, for `tests.routers`
    )
    assert done.returncode == 0, done.stderr
