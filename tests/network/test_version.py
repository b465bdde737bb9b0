"""The installed release, as MCP peers and OpenTelemetry receivers are told it."""

from __future__ import annotations

import importlib.metadata

import pytest

from network.version import UNKNOWN_VERSION, library_version


def test_the_version_is_the_installed_distributions() -> None:
    assert library_version() == importlib.metadata.version("agent-network")


def test_a_checkout_never_installed_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    library_version.cache_clear()
    monkeypatch.setattr(importlib.metadata, "version", missing)
    try:
        assert library_version() == UNKNOWN_VERSION
    finally:
        library_version.cache_clear()
