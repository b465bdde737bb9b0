"""The page, script and style ship in the package (wheel and editable installs alike)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_static_files_are_package_data(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("network", "agents", "routers"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    built = tmp_path / "built"
    # setuptools' build_py is what a wheel (and an editable install's finder) is made from
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import setuptools; setuptools.setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(built),
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    static = built / "network" / "devui" / "static"
    assert sorted(p.name for p in static.iterdir()) == [
        "conversationview.js",
        "devui.css",
        "devui.js",
        "dom.js",
        "graphview.js",
        "index.html",
        "patch.js",
        "sse.js",
        "stateview.js",
        "timetravel.js",
    ]
