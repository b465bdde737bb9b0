"""Shared test configuration: async tests run on asyncio through anyio's pytest plugin."""

import logging
from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
