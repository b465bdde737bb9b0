"""Shared test configuration: async tests run on asyncio through anyio's pytest plugin, and
the suite can run on pytest-xdist workers (`-n 4 --dist loadgroup`: docs/dependencies.md)."""

import logging
import os
import sys
from collections import Counter
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
import structlog

# Compiled bytecode is cached (in the `__pycache__` folders .gitignore leaves out) even where
# PYTHONDONTWRITEBYTECODE is set: without it each pytest-xdist worker rewrites the asserts of
# every test module anew (about 14 s of CPU a worker) and each of the hundreds of processes
# the tests start compiles the library again (0.3 s each). `python -B` is left as asked.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):  # the workers and children inherit it
    sys.dont_write_bytecode = False

# Fixtures too costly to start once per worker: every test that takes one runs on one worker.
# (The PostgreSQL servers start in a second or two: each worker starts its own.) The Dev UI's
# browser is shared by the tests that take it while they run one after another
# (tests/network/devui/conftest.py): on one worker they do, and it is launched once.
ONE_WORKER_FIXTURES = {"llama_server": "llama-server", "browser": "chromium"}
SHARED_SCOPES = ("module", "class", "package")
DEADLINE = (
    "deadline: asserts a wall-clock bound of a second or two (a connect deadline, a wake-up "
    "latency); on a machine busy with other test workers it can miss, so a parallel run can "
    "leave these tests to a run of their own: `-m 'not deadline'`, then `-m deadline`"
)


LITELLM = (
    "litellm: the test imports litellm (6 s of CPU a process); under xdist every such test "
    "runs on one worker, the only one that pays for the import"
)


HEAVY = (
    "heavy: a test that alone takes tens of seconds (a docs build, a type check, examples "
    "run as processes); under xdist it is handed out before the light tests, so that it does "
    "not start last, near the end of the collection, and end the run while the others idle"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", DEADLINE)
    config.addinivalue_line("markers", HEAVY)
    config.addinivalue_line("markers", LITELLM)
    # pytest-xdist would hand out the groups by their number of tests, largest first (its
    # `--loadscope-reorder`, on by default): the real model server's group (few tests, the
    # longest) came after a dozen larger ones. The order below (`_handing_out_order`) is
    # kept instead.
    if getattr(config.option, "dist", None) == "loadgroup":
        config.option.loadscopereorder = False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under `-m deadline` (the README's second part), a test file whose text never says
    `deadline` holds no such test: it is not imported at all, which spares that process
    collecting (and importing the dependencies of) the whole suite to run a dozen tests.
    `_check_deadline_files` keeps the premise true."""
    if config.getoption("markexpr", "").strip() != "deadline":
        return None
    if not (collection_path.name.startswith("test_") and collection_path.suffix == ".py"):
        return None
    return "deadline" not in collection_path.read_text(encoding="utf-8") or None


def _check_deadline_files(items: list[pytest.Item]) -> None:
    """A `deadline` test whose file does not say `deadline` (its mark added elsewhere) would
    be skipped by `pytest_ignore_collect` under `-m deadline`: refuse it in every run."""
    for item in items:
        if item.get_closest_marker("deadline") is not None:
            path = item.path
            if "deadline" not in path.read_text(encoding="utf-8"):
                raise pytest.UsageError(f"{item.nodeid}: marked deadline, its file never says so")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    """Under `--dist loadgroup`, keep a module's tests on one worker when they share a fixture
    of module scope (a browser, a served app, an npm client): spread over the workers, each
    worker would start its own, and start it again each time the module's tests come back to
    it between other modules' tests. Tests sharing nothing are spread one by one."""
    _check_deadline_files(items)
    if config.pluginmanager.hasplugin("xdist"):
        for item in items:
            group = _one_worker_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    yield  # pytest-xdist's own hook runs here: it names each test's group in its node id
    if getattr(config.option, "loadgroup", False):  # on a worker of `--dist loadgroup`
        for item in items:
            _name_the_group_in_the_node_id(item)
        items[:] = _handing_out_order(items)


def _handing_out_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """The order pytest-xdist hands the tests out in: the longest groups first (the real model
    server's tests, and the browser's, each one after another on one worker), then the heavy
    tests, then the other groups, more tests first, then the rest as collected; so that nothing
    long starts late and ends the run while the other workers idle. A stable sort: every worker
    collects the same order, as pytest-xdist requires."""
    sizes = Counter(_group_of(item) for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        if _on_one_worker_fixture(item):
            return (0, 0)
        if item.get_closest_marker("heavy") is not None:
            return (1, 0)
        group = _group_of(item)
        return (2, -sizes[group]) if group is not None else (3, 0)

    return sorted(items, key=rank)


def _group_of(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


def _on_one_worker_fixture(item: pytest.Item) -> bool:
    return any(key in item.fixturenames for key in ONE_WORKER_FIXTURES)


def _one_worker_group(item: pytest.Item) -> str | None:
    group = next(
        (name for key, name in ONE_WORKER_FIXTURES.items() if key in item.fixturenames), None
    )
    if group is None and item.get_closest_marker("litellm") is not None:
        group = "litellm"
    definitions = getattr(item, "_fixtureinfo", None)
    if group is None and definitions is not None:
        scopes = {
            definition.scope
            for chain in definitions.name2fixturedefs.values()
            for definition in chain
        }
        if scopes & set(SHARED_SCOPES):
            group = item.nodeid.split("::")[0]
    return group


def _name_the_group_in_the_node_id(item: pytest.Item) -> None:
    """What pytest-xdist 3.8's loadgroup does, done where it no longer takes: it appends
    `@group` to a grouped test's node id (the scheduler reads the group from there) by
    setting `item._nodeid`, which pytest 9.2 no longer reads (node ids are structured, in
    `item._id`): every `xdist_group` mark was silently ignored and a module's shared fixture
    was set up on every worker, again and again (pytest-dev/pytest-xdist#1386)."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    suffix = "@" + "_".join(sorted(names))
    if not names or item.nodeid.endswith(suffix):
        return  # no group, or pytest-xdist named it (an older pytest, a fixed xdist)
    structured = getattr(item, "_id", None)
    if structured is None:
        return
    item._id = type(structured).parse(f"{item.nodeid}{suffix}")


@pytest.fixture(scope="session", autouse=True)
def default_store_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The default thread store (`AGENT_NETWORK_STORE`, else `agent-network.db` in the working
    directory) is a file in a temporary folder for the whole session, in this process and every
    process a test starts: a test that opens the default store from the checkout (a CLI run, a
    served process) wrote `agent-network.db` into it. Set even where the environment names one:
    the suite never writes into a user's store. Tests of the default itself unset it."""
    from network.threads.urls import STORE_ENV

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(STORE_ENV, str(tmp_path_factory.mktemp("default-store") / "agent-network.db"))
        yield


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def structlog_as_found() -> Iterator[None]:
    """structlog left as the test found it. `structlog.testing.capture_logs` (and any test's
    own `structlog.configure`) leaves structlog marked as configured, and the library builds
    its log events only when something listens: a later test in the same worker would run
    with an application's logging on, and see fresh message ids or extra events it did not
    ask for."""
    configured = structlog.is_configured()
    yield
    if not configured and structlog.is_configured():
        structlog.reset_defaults()


@pytest.fixture(scope="session", autouse=True)
def module_http_clients_closed() -> Iterator[None]:
    """Each test module's own `http = httpx.Client(...)` (the Dev UI's and the dev server's
    tests keep one for the module) closed when the session ends: left to the worker's exit,
    its kept-alive connection to a loopback server was an `unclosed <socket.socket`
    ResourceWarning. Not when a module's tests end: under xdist a module's tests may come back
    to a worker after another module's, and found their client closed."""
    yield
    httpx = sys.modules.get("httpx")  # no module made one without importing httpx
    if httpx is None:
        return
    for name, module in list(sys.modules.items()):
        client = getattr(module, "http", None) if name.startswith("tests.") else None
        if isinstance(client, httpx.Client):
            client.close()


@pytest.fixture
def quiet_logs() -> Iterator[None]:
    """structlog filtered to WARNING: no log sink joins a run, so a test sees only its own sinks."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL server for the whole session (started only if a test needs it)."""
    from tests.network.threads.postgres import postgres_server

    with postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """PostgreSQL with pgvector for the whole session (the memory store's tests)."""
    from tests.network.memory.pgvector import pgvector_server

    with pgvector_server() as url:
        yield url
