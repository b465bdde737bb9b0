"""`agent-network serve` takes what a deployment needs without an app factory, shown on real
processes: A2A at the root beside AG-UI, the Host names answered on loopback, authorization by
an import path (`--authorize MODULE:FUNCTION`) or a token file, CORS origins, the lease time,
and two worker processes sharing one SQLite store (each answering, one run per thread across
them); and bad options are clear errors."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import httpx
import pytest

from network.cli.main import _parser
from network.cli.serve_app import SHUTDOWN_GRACE_S, serve_app
from tests.fakes.processes import ROOT, free_port, server_process
from tests.network.a2a.servers import TEAM
from tests.network.cli.test_main import cli_main


@contextmanager
def serving(*options: str, probe: str = "/capabilities") -> Iterator[str]:
    with serving_process(*options, probe=probe) as (url, _):
        yield url


@contextmanager
def serving_process(
    *options: str, probe: str = "/capabilities", port: str | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = port or str(free_port())
    command = [sys.executable, "-m", "network.cli", "serve", TEAM, "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    with server_process([*command, *options], f"{url}{probe}", ok=None, stdout=None) as process:
        yield url, process


def python_children(pid: int) -> list[int]:
    """The live child processes of `pid` that run Python (uvicorn's workers; not its
    resource tracker, which runs Python too but is started with `-c`)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if b"multiprocessing.resource_tracker" not in b" ".join(command):
                found.append(int(child))
    return found


def run_body(thread: str) -> dict[str, object]:
    return {
        "threadId": thread,
        "runId": f"run-{time.monotonic_ns()}",
        "messages": [{"id": f"m-{time.monotonic_ns()}", "role": "user", "content": "hello"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def test_authorize_by_import_path_cors_and_lease_time(tmp_path: Path) -> None:
    store = str(tmp_path / "threads.db")
    hook = "tests.network.cli.authorize_hook:authorize"  # an import path, not a file
    options = ["--store", store, "--authorize", hook, "--lease-ttl", "5"]
    options += ["--cors-origin", "https://app.example"]
    # spelled as a browser never sends it: compared as the browser does (it was never equal)
    options += ["--cors-origin", "HTTPS://Other.Example:443"]
    with serving(*options) as url:
        refused = httpx.post(url, json=run_body("t-1"), timeout=30)
        assert refused.status_code == 401
        answered = httpx.post(
            url, json=run_body("t-1"), headers={"authorization": "Bearer token-alice"}, timeout=30
        )
        assert answered.status_code == 200 and "RUN_FINISHED" in answered.text
        allowed = httpx.options(
            url,
            headers={
                "origin": "https://app.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization,content-type",
            },
        )
        assert allowed.headers["access-control-allow-origin"] == "https://app.example"
        other = httpx.options(
            url,
            headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
        )
        assert "access-control-allow-origin" not in other.headers
        normalized = httpx.options(
            url,
            headers={"origin": "https://other.example", "access-control-request-method": "POST"},
        )
        assert normalized.headers["access-control-allow-origin"] == "https://other.example"


def test_bound_to_loopback_it_answers_only_the_hosts_it_is_told() -> None:
    # A page on evil.example whose name the attacker re-points at 127.0.0.1 (DNS rebinding)
    # is same-origin to the browser, so CORS does not stop it: the Host header does.
    with serving("--allowed-host", "Agents.Example") as url:
        port = url.rsplit(":", 1)[1]
        for host in (f"evil.example:{port}", "evil.example", "127.0.0.1.evil.example"):
            refused = httpx.post(url, json=run_body("h-1"), headers={"host": host}, timeout=30)
            assert refused.status_code == 400, host
        for index, host in enumerate((f"localhost:{port}", "agents.example", f"[::1]:{port}")):
            answered = httpx.post(
                url, json=run_body(f"h-{index}"), headers={"host": host}, timeout=30
            )
            assert answered.status_code == 200 and "RUN_FINISHED" in answered.text, host


def test_bound_beyond_loopback_its_allowed_hosts_and_this_machines_names_are_answered() -> None:
    # A health check on the machine itself (curl http://127.0.0.1:PORT/) names a loopback
    # host, which no rebinding page can send: the browser sends the page's own name.
    with serving("--host", "0.0.0.0", "--allowed-host", "agents.example") as url:
        port = url.rsplit(":", 1)[1]
        refused = httpx.post(
            url, json=run_body("b-x"), headers={"host": "evil.example"}, timeout=30
        )
        assert refused.status_code == 400
        for index, host in enumerate((f"127.0.0.1:{port}", "localhost", "agents.example")):
            answered = httpx.post(
                url, json=run_body(f"b-{index}"), headers={"host": host}, timeout=30
            )
            assert answered.status_code == 200 and "RUN_FINISHED" in answered.text, host


def test_two_worker_processes_share_one_store(tmp_path: Path) -> None:
    store = str(tmp_path / "threads.db")
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("alice alice-token-0123456789\n")
    options = ["--store", store, "--workers", "2", "--token-file", str(tokens)]
    with serving_process(*options) as (url, process):
        assert len(python_children(process.pid)) == 2  # two worker processes, not one
        headers = {"authorization": "Bearer alice-token-0123456789"}
        refused = httpx.post(
            url, json=run_body("w-x"), headers={"authorization": "Bearer no"}, timeout=30
        )
        assert refused.status_code == 401  # the token file decides, in every worker
        for index in range(6):  # the kernel spreads connections over both processes
            with httpx.Client(timeout=30) as fresh:
                done = fresh.post(url, json=run_body(f"w-{index}"), headers=headers, timeout=30)
            assert done.status_code == 200 and "RUN_FINISHED" in done.text
        listed = httpx.get(f"{url}/threads", headers=headers, timeout=10).json()
        assert {f"w-{index}" for index in range(6)} <= {t["threadId"] for t in listed["threads"]}


def test_workers_end_when_their_supervisor_is_killed_outright(tmp_path: Path) -> None:
    # kill -9 of the supervisor: its workers must not go on serving (holding the port)
    options = ["--store", str(tmp_path / "threads.db"), "--workers", "2"]
    with serving_process(*options) as (url, process):
        workers = python_children(process.pid)
        assert len(workers) == 2
        process.kill()
        process.wait(10)
        deadline = time.monotonic() + 20
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers), "a worker outlived its supervisor"
        port = url.rsplit(":", 1)[1]
        with serving_process(*options[:2], probe="/capabilities", port=port) as (again, _):
            assert (
                httpx.get(f"{again}/capabilities", timeout=30).status_code == 200
            )  # the port is free


def test_workers_on_port_0_print_the_port_they_serve_on(tmp_path: Path) -> None:
    # uvicorn's supervisor bound the socket itself: the banner said ":0", a port no one can
    # reach; now the command binds it, names it, and hands it to each worker
    command = [sys.executable, "-m", "network.cli", "serve", TEAM, "--port", "0"]
    command += ["--store", str(tmp_path / "threads.db"), "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline().decode()
        assert banner.startswith("Serving 'till' over AG-UI at http://127.0.0.1:"), banner
        assert banner.endswith("(2 processes)\n"), banner
        url = banner.split(" at ", 1)[1].split(" (", 1)[0]
        assert not url.endswith(":0/"), banner
        deadline = time.monotonic() + 120  # the workers start: a minute on a loaded machine
        while True:
            try:
                answered = httpx.get(f"{url.rstrip('/')}/capabilities", timeout=10)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, banner
                time.sleep(0.2)
        assert answered.status_code == 200
        assert len(python_children(process.pid)) == 2
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_bound_to_an_ipv6_address_the_banner_names_a_url_a_client_can_use() -> None:
    # it printed http://::1:PORT/, which no client parses as a host and a port
    command = [sys.executable, "-m", "network.cli", "serve", TEAM, "--port", "0"]
    command += ["--host", "::1", "--a2a"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline().decode()
        port = banner.split("]:", 1)[1].split("/", 1)[0]
        expected = f"at http://[::1]:{port}/ and over A2A at http://[::1]:{port}/a2a "
        assert expected in banner, banner
        answered = httpx.get(f"http://[::1]:{port}/capabilities", timeout=30)
        assert answered.status_code == 200
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_sigterm_ends_a_run_under_way_within_the_grace_and_frees_its_thread(
    tmp_path: Path,
) -> None:
    # A run that does not end (a tool waiting 600 s) kept a SIGTERM'd server running for as
    # long as the run took: a deploy's SIGTERM did nothing, and the SIGKILL that followed
    # left the thread busy for --lease-ttl. The runs under way now get the grace, then are
    # cancelled: the process ends, the lease is released, the thread runs again at once.
    store = str(tmp_path / "threads.db")
    options = ["--store", store, "--lease-ttl", "600"]
    hung = {**run_body("t-hung"), "messages": [{"id": "m1", "role": "user", "content": "wait 600"}]}
    with serving_process(*options) as (url, process):
        seen: list[str] = []

        def stream() -> None:
            with (
                contextlib.suppress(httpx.HTTPError),
                httpx.stream("POST", url, json=hung, timeout=120) as response,
            ):
                seen.extend(response.iter_lines())

        client = threading.Thread(target=stream, daemon=True)
        client.start()
        deadline = time.monotonic() + 60
        while not any("TOOL_CALL_START" in line for line in seen):
            assert time.monotonic() < deadline and process.poll() is None, seen
            time.sleep(0.1)
        stopped_at = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(SHUTDOWN_GRACE_S + 30)
        assert time.monotonic() - stopped_at < SHUTDOWN_GRACE_S + 30
        client.join(10)
    with serving_process(*options) as (url, _):
        again = httpx.post(url, json=run_body("t-hung"), timeout=30)
        assert again.status_code == 200 and "RUN_FINISHED" in again.text  # not 409 for 600 s


def test_one_process_logs_warnings_and_errors_only() -> None:
    """docs/cli.md: the commands log warnings and errors only. One `serve` process logged
    uvicorn's INFO lines (its start, one access line a request, on stdout) where the
    `--workers` processes, `dev` and `mcp` did not."""
    command = [sys.executable, "-m", "network.cli", "serve", TEAM, "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline().decode()
        url = banner.split(" at ", 1)[1].split(" (", 1)[0].rstrip("/")
        deadline = time.monotonic() + 60
        while True:
            try:
                answered = httpx.post(url + "/", json=run_body("t-logs"), timeout=30)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, banner
                time.sleep(0.2)
        assert answered.status_code == 200
        assert httpx.get(f"{url}/capabilities", timeout=10).status_code == 200
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert out.decode() == "", out  # after the banner: no access lines
    assert "INFO" not in err.decode(), err


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a2a_at_the_root_and_ag_ui_beside_it(tmp_path: Path) -> None:
    options = ["--store", str(tmp_path / "threads.db"), "--a2a", "--a2a-path", "/"]
    with serving(*options, "--path", "/agui", probe="/agui/capabilities") as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json", timeout=30).json()
        assert card["name"] == "till"
        answered = httpx.post(f"{url}/agui", json=run_body("t-root"), timeout=30)
        assert answered.status_code == 200 and "RUN_FINISHED" in answered.text
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "none"}}
        found = httpx.post(url + "/", json=rpc, headers={"A2A-Version": "1.0"}, timeout=30).json()
        assert found["error"]["code"] == -32001  # the A2A endpoint: task not found


def test_max_runs_bounds_both_protocols_of_a_process_together(tmp_path: Path) -> None:
    options = ["--a2a", "--max-runs", "1"]
    with serving(*options) as url:
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "wait 60"}]}
        params = {"message": message, "configuration": {"returnImmediately": True}}
        send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
        a2a = {"A2A-Version": "1.0"}
        task = httpx.post(f"{url}/a2a", json=send, headers=a2a, timeout=30).json()["result"]
        busy = httpx.post(url + "/", json=run_body("t-busy"), timeout=30)  # the A2A task holds it
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert busy.json()["error"]["code"] == "server_busy"
        cancel = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask"}
        cancel["params"] = {"id": task["task"]["id"]}
        httpx.post(f"{url}/a2a", json=cancel, headers=a2a, timeout=30)
        answered = httpx.post(url + "/", json=run_body("t-free"), timeout=30)
        assert answered.status_code == 200 and "RUN_FINISHED" in answered.text


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--max-runs", "0"], "--max-runs"),
        (["--lease-ttl", "nan"], "--lease-ttl"),
        (["--lease-ttl", "-1"], "--lease-ttl"),
        # lost before a run's first step: every run ended LeaseLostError (0.3 s did too)
        (["--lease-ttl", "1e-300"], "--lease-ttl: must be at least 1 second"),
        (["--lease-ttl", "0.3"], "--lease-ttl: must be at least 1 second"),
        (["--workers", "0"], "error: --workers must be from 1 to 64, got 0\n"),
        # no upper bound: a typo started a million processes, or took a million runs at once
        (["--workers", "1000000"], "error: --workers must be from 1 to 64, got 1,000,000\n"),
        (["--max-runs", "10001"], "error: --max-runs must be at most 10,000, got 10,001\n"),
        (["--workers", "2"], "--workers above 1 needs a database --store"),
        (["--authorize", "no_such_module_here:authorize"], "--authorize: cannot import"),
        # a file meant: it was "cannot import missing.py: No module named 'missing'"
        (["--authorize", "missing.py:f"], "error: --authorize: no such file: missing.py\n"),
        (["--authorize", "auth/missing:f"], "error: --authorize: no such file: auth/missing\n"),
        (["--authorize", "tests:f"], "--authorize: tests has no function 'f'"),  # a package
        (["--authorize", "x:y", "--token-file", "t.txt"], "not both"),
        # a function the server cannot call as authorize(request, thread_id): every request
        # was a 500 "authorization failed"
        (
            ["--authorize", "tests.network.cli.authorize_hook:no_arguments"],
            "error: --authorize: tests.network.cli.authorize_hook:no_arguments cannot be called "
            "as authorize(request, thread_id)",
        ),
        # empty (an unset variable: `--token-file "$TOKENS"`): it served every request
        (["--authorize", ""], "error: --authorize is empty"),
        (["--token-file", ""], "error: --token-file is empty"),
        (["--token-file", " "], "error: --token-file is empty"),
        # values no browser's Origin or Host can equal: every browser was refused, unexplained
        (["--cors-origin", "https://app.example/"], "--cors-origin: 'https://app.example/' is"),
        (["--cors-origin", "app.example"], "is not an origin"),
        (["--cors-origin", "*"], "is not an origin"),
        (["--allowed-host", "app.example:8443"], "--allowed-host: 'app.example:8443' is"),
        (["--allowed-host", "https://app.example"], "is not a host name"),
    ],
)
def test_bad_serve_options_are_clear_errors(options: list[str], error: str) -> None:
    # through main(), in this process; a server started anyway fails the test (never hangs it)
    refused = AssertionError("served despite a bad option")
    with (
        mock.patch("uvicorn.run", side_effect=refused),
        mock.patch("uvicorn.Server.run", side_effect=refused),
    ):
        done = cli_main("serve", TEAM, "--port", "0", *options)
    assert done.returncode != 0
    assert error in done.stderr


def test_a_store_that_cannot_be_opened_is_one_line_and_nothing_else() -> None:
    # docs/deploying.md: "one line naming the option"; the store's own error log line was
    # printed too (on stdout, in colour), before it
    refused = AssertionError("served despite a store that cannot be opened")
    unreachable = "postgresql://app:s3cret@127.0.0.1:1/threads"  # nothing listens on port 1
    with mock.patch("uvicorn.Server.run", side_effect=refused):
        done = cli_main("serve", TEAM, "--port", "0", "--store", unreachable)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --store: cannot open the thread store: ")
    assert done.stderr.count("\n") == 1 and done.stdout == ""
    assert "s3cret" not in done.stderr


def test_bound_beyond_this_machine_with_authorization_it_does_not_warn(tmp_path: Path) -> None:
    # docs/deploying.md: the warning is for a server "without either" --authorize or
    # --token-file; it was printed with a token file too. An address this machine lacks:
    # the command goes as far as binding, then stops with one error line.
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("alice alice-token-0123456789\n")
    exposed = ["--host", "203.0.113.1", "--port", "0"]
    guarded = cli_main("serve", TEAM, *exposed, "--token-file", str(tokens))
    assert guarded.returncode == 2 and "error: cannot listen on 203.0.113.1" in guarded.stderr
    assert "WARNING" not in guarded.stderr
    hooked = cli_main("serve", TEAM, *exposed, "--authorize", "tests.network.cli.authorize_hook")
    assert hooked.returncode == 2 and "WARNING" not in hooked.stderr
    anyone = cli_main("serve", TEAM, *exposed)
    assert "WARNING: the AG-UI server is bound to 203.0.113.1" in anyone.stderr


@pytest.mark.parametrize("command", ["dev", "mcp"])
def test_an_empty_authorize_is_an_error_for_dev_and_mcp(command: str) -> None:
    # `--authorize ""` was taken as no hook: every request served, every thread shown
    refused = AssertionError("served despite an empty --authorize")
    with (
        mock.patch("uvicorn.Server.run", side_effect=refused),
        mock.patch("anyio.run", side_effect=refused),
    ):
        done = cli_main(command, TEAM, "--port", "0", "--authorize", "")
    assert done.returncode == 2
    assert "error: --authorize is empty" in done.stderr


@pytest.mark.anyio
async def test_a_page_on_an_allowed_origin_reads_retry_after_and_the_challenge(
    tmp_path: Path,
) -> None:
    # docs/serving.md: a refusal carries `Retry-After` (503, 409) and a 401 how to
    # authenticate; CORS shows a page only the safelisted response headers unless the server
    # exposes others, so a browser client on the allowed origin never saw either.
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("alice alice-token-0123456789\n")
    args = _parser().parse_args(
        ["serve", TEAM, "--token-file", str(tokens), "--cors-origin", "https://app.example"]
    )
    asgi, _ = serve_app(args)
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        refused = await http.post(
            "/", json=run_body("c-1"), headers={"origin": "https://app.example"}
        )
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == "https://app.example"
    exposed = refused.headers["access-control-expose-headers"].lower().split(", ")
    assert {"retry-after", "www-authenticate"} <= set(exposed)
