"""The PostgreSQL fixture fails, never skips, when the server is not installed."""

from __future__ import annotations

import pytest

from tests.network.threads.postgres import postgres_bindir


def test_a_missing_server_fails_the_tests_with_a_clear_message() -> None:
    with pytest.raises(pytest.fail.Exception, match="install-test-deps.sh"):
        postgres_bindir("/nonexistent/postgresql/*/bin/initdb")


def test_the_installed_server_is_found() -> None:
    assert (postgres_bindir() / "pg_ctl").exists()
