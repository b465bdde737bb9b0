"""`agent-network dev`: the dev UI started as a user would, through a subprocess (its
refusals of bad arguments through `main()`, in this process)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from unittest import mock

import anyio
import httpx

from network import ThreadRef
from network.cli.bind import is_loopback, warn_if_exposed
from network.cli.main import main
from tests.network.cli.dev_process import dev_server
from tests.network.cli.test_main import cli_main
from tests.network.devui.networks import codegen_network

ROOT = Path(__file__).resolve().parents[3]
TARGET = "tests/network/devui/networks.py:network"

# generous: the machine running the suite may be busy (no timing is asserted)
http = httpx.Client(timeout=60)


def test_dev_serves_the_page_the_graph_and_the_store_on_127_0_0_1(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    anyio.run(lambda: codegen_network().run("Write add", thread=ThreadRef("stored-1", store=db)))
    store = ("--store", f"sqlite:{db}")
    with dev_server(TARGET, "--port", "0", *store, name="codegen") as (url, process):
        page = http.get(url + "/", timeout=10)
        assert page.status_code == 200 and "devui.js" in page.text
        graph = http.get(url + "/api/graph", timeout=10).json()
        assert [n["agent"] for n in graph["nodes"] if n["agent"]] == [
            "planner",
            "coder",
            "reviewer",
        ]
        threads = http.get(url + "/api/threads", timeout=10).json()["threads"]
        assert [t["thread_id"] for t in threads] == ["stored-1"]
        run = http.post(
            url + "/agui/",
            json={
                "threadId": "t",
                "runId": "r",
                "messages": [{"id": "m", "role": "user", "content": "go"}],
            },
            timeout=30,
        )
        assert run.status_code == 200 and '"type":"RUN_FINISHED"' in run.text
        # the page's run lives on --store: listed beside the stored thread, with its calls
        threads = http.get(url + "/api/threads", timeout=10).json()["threads"]
        assert sorted(t["thread_id"] for t in threads) == ["stored-1", "t"]
        stored = http.get(url + "/api/thread?id=t", timeout=10).json()
        assert len(stored["steps"]) == 5
    assert process.stderr is not None
    assert "WARNING" not in process.stderr.read()


def test_dev_refuses_to_bind_beyond_this_machine_without_authorization(capsys: object) -> None:
    # Bound elsewhere, the page would list every stored thread and run as any user it is told.
    status = main(["dev", TARGET, "--host", "0.0.0.0", "--port", "0"])
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    assert status == 2
    assert "bound to 0.0.0.0 it needs --authorize FILE:FUNCTION" in captured.err
    assert "WARNING" not in captured.err  # refused before anything listens


def test_dev_warns_when_bound_beyond_this_machine(capsys: object) -> None:
    # 203.0.113.1 (TEST-NET-3) is no address of this machine: with authorization the warning
    # comes first, then binding fails with one line and status 2, so nothing ever listens.
    hook = "tests/network/cli/authorize_hook.py:authorize"
    status = main(["dev", TARGET, "--host", "203.0.113.1", "--port", "0", "--authorize", hook])
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    assert status == 2
    assert "WARNING: the dev UI is bound to 203.0.113.1, not 127.0.0.1" in captured.err
    assert "error: cannot listen on 203.0.113.1:0" in captured.err
    missing = main(["dev", TARGET, "--authorize", "tests/network/cli/authorize_hook.py:nope"])
    assert missing == 2
    assert "has no function 'nope'" in capsys.readouterr().err  # type: ignore[attr-defined]


def test_loopback_addresses_are_not_warned_about() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"):
        assert is_loopback(host), host
        assert warn_if_exposed(host, "x", io.StringIO()) is False
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.com"):
        stream = io.StringIO()
        assert warn_if_exposed(host, "the dev UI", stream) is True
        assert "WARNING: the dev UI is bound to " + host in stream.getvalue()


def refused_by_dev(*args: str) -> subprocess.CompletedProcess[str]:
    """`agent-network dev ARGS` through main(), in this process; a page served anyway fails
    the test (never hangs it)."""
    served = AssertionError("served despite a bad argument")
    with mock.patch("uvicorn.Server", side_effect=served):
        return cli_main("dev", *args)


def test_dev_refuses_a_missing_file() -> None:
    done = refused_by_dev("no/such/file.py:network", "--port", "0")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: no such file: no/such/file.py"


def test_serve_warns_too_when_bound_beyond_this_machine(capsys: object) -> None:
    code = main(  # an address this machine lacks: the warning, then one error line
        [
            "serve",
            "tests/network/cli/example_network.py:network",
            "--host",
            "203.0.113.1",
            "--port",
            "0",
        ]
    )
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    assert "WARNING: the AG-UI server is bound to 203.0.113.1, not 127.0.0.1" in captured.err
    assert code == 2 and "error: cannot listen on 203.0.113.1:0:" in captured.err


def test_the_store_option_takes_a_path_a_url_or_sqlite_path() -> None:
    from network.cli.main import store_option

    assert store_option(None) is None
    assert store_option("sqlite:threads.db") == "threads.db"
    assert store_option("sqlite:///abs/threads.db") == "sqlite:///abs/threads.db"
    assert store_option("postgresql://u@h/db") == "postgresql://u@h/db"
    assert store_option("threads.db") == "threads.db"
    done = refused_by_dev(TARGET, "--port", "0", "--store", " ")
    assert done.returncode == 2
    assert "--store is empty" in done.stderr
    for bare in ("sqlite:", "sqlite: "):  # the scheme and no path
        done = refused_by_dev(TARGET, "--port", "0", "--store", bare)
        assert done.returncode == 2
        assert done.stderr == f"error: --store {bare!r} names no file; give sqlite:PATH\n"
