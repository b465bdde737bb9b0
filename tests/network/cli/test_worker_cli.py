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
        (["--db", "sqlite:///w.db", "--concurrency", "0"], "--concurrency must be from 1"),
        # was accepted: the worker started, and each claim failed with an OverflowError
        (
            ["--db", "sqlite:///w.db", "--concurrency", str(10**20)],
            "--concurrency must be from 1 to 10,000",
        ),
        # each was a traceback (an IndexError; the launch's DurableConfigError) and status 1
        (["--db", "sqlite://"], "--db: db must name an SQLite file"),
        (["--db", "sqlite:///:memory:"], "--db: db must name an SQLite file"),
        (["--db", "sqlite:///w.db", "--executor-id", "a b"], "--executor-id: executor_id must"),
        (["--db", "sqlite:///w.db", "--executor-id", ""], "--executor-id: executor_id must"),
        # 1 to 100 characters with `an-worker-` before it: was refused naming the prefixed id
        (["--db", "sqlite:///w.db", "--executor-id", "x" * 95], "must be 1 to 90 letters"),
    ],
)
def test_bad_worker_options_are_refused(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["worker", TARGET, *options]) == 2
    assert message in capsys.readouterr().err


def test_launch_refuses_a_concurrency_no_claim_can_take(tmp_path: Path) -> None:
    from network import durable

    db = f"sqlite:///{tmp_path / 'never-made.sqlite'}"
    with pytest.raises(durable.DurableConfigError, match="worker_concurrency must be .* <= 10000"):
        durable.launch([], db=db, worker=True, worker_concurrency=10**20)
    assert not (tmp_path / "never-made.sqlite").exists()


def test_a_worker_refused_at_launch_leaves_the_launched_engine_running(tmp_path: Path) -> None:
    """A refused `run_worker` shut the process's durable engine down on its way out."""
    from network import durable
    from tests.network.durable.crash_network import team

    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    engine = durable.launch([team], db=db)
    try:
        with pytest.raises(durable.DurableConfigError, match="already launched"):
            durable.run_worker([team], db=db)  # a worker: not the engine this process launched
        assert durable.launched() is engine
    finally:
        durable.shutdown()


@pytest.mark.parametrize("db", ["sqlite://", "sqlite:///", "sqlite:///:memory:", "sqlite://h/x.db"])
def test_a_system_database_that_is_no_sqlite_file_is_refused(db: str) -> None:
    from network import durable

    with pytest.raises(durable.DurableConfigError, match="db must name an SQLite file"):
        durable.launch([], db=db)
    with pytest.raises(durable.DurableConfigError, match="db must name an SQLite file"):
        durable.DurableClient(db)
    assert durable.launched() is None


def test_an_empty_system_database_url_is_refused_not_replaced_by_the_default() -> None:
    from network import durable

    with pytest.raises(durable.DurableConfigError, match="got ''"):
        durable.launch([], db="")  # launched on agent-network-durable.sqlite before
    assert durable.launched() is None


def test_a_network_given_twice_is_refused_before_the_worker_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # was "Worker ... started", then the launch's DurableConfigError traceback (status 1)
    assert main(["worker", TARGET, TARGET, "--db", "sqlite:///w.db"]) == 2
    captured = capsys.readouterr()
    assert "two of the targets are networks named 'codegen'" in captured.err
    assert "started" not in captured.out


def test_a_launch_the_worker_is_refused_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from network import durable
    from tests.network.durable.crash_network import team

    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([team], db=db)  # this process launched: a worker cannot launch here
    try:
        assert main(["worker", TARGET, "--db", db]) == 2
        assert "error: durable runs are already launched" in capsys.readouterr().err
    finally:
        durable.shutdown()


@pytest.mark.parametrize(
    ("db", "reason"),
    [
        ("postgresql://agent:s3cret@127.0.0.1:1/runs", "OperationalError: connection failed"),
        ("sqlite:////proc/runs.sqlite", "OperationalError: unable to open database file"),
    ],
)
def test_a_database_the_worker_cannot_open_is_one_line_and_status_2(
    db: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was "Worker ... started", then the driver's traceback (status 1)."""
    assert main(["worker", TARGET, "--db", db]) == 2
    captured = capsys.readouterr()
    assert f"error: --db: cannot open the durable runs database: {reason}" in captured.err
    assert "s3cret" not in captured.err + captured.out
    assert "Traceback" not in captured.err and "started" not in captured.out
