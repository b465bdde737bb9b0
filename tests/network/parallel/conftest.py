"""The thread stores of the thread tests (memory, SQLite, PostgreSQL), for fan-outs too."""

from tests.network.threads.conftest import (  # noqa: F401 (fixtures)
    open_store,
    store,
    store_kind,
    store_url,
)
