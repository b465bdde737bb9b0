"""The library as it was at a git revision, for benchmarks that measure a change against it."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export_revision(revision: str, prefix: str = "agent-network-before-") -> Path:
    """The library's packages (network, agents, routers) at git `revision`, in a new temporary
    directory: put it first on a child process's `sys.path` to run that version."""
    target = Path(tempfile.mkdtemp(prefix=prefix))
    archive = subprocess.run(
        ["git", "archive", revision, "network", "agents", "routers"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target
