"""`agent-network worker`: bad options are one line on stderr and status 2, before any launch."""

from __future__ import annotations

from pathlib import Path

import pytest

from network.cli.main import main

pytest.importorskip("dbos")
TARGET = f"{Path(__file__).resolve().parents[3] / 'examples' / 'codegen.py'}:network"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--db", "mysql://x/y"], "--db: db must be a sqlite:// or postgresql:// URL"),
        (["--db", "sqlite:///w.db", "--concurrency", "0"], "--concurrency must be >= 1"),
    ],
)
def test_bad_worker_options_are_refused(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["worker", TARGET, *options]) == 2
    assert message in capsys.readouterr().err
