"""The CLI's logs are coloured on a terminal only: to a file or a pipe they are plain text."""

from __future__ import annotations

import io

import pytest
import structlog

from network.cli.main import _quiet_logs


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def logged(stream: io.StringIO) -> str:
    _quiet_logs(stream=stream)
    structlog.get_logger().warning("store.slow", seconds=3)
    return stream.getvalue()


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return monkeypatch


def test_logs_to_a_pipe_or_a_file_are_plain_text(environment: pytest.MonkeyPatch) -> None:
    # they carried ANSI escape codes into log files and collected container output
    text = logged(io.StringIO())
    assert "store.slow" in text and "seconds=3" in text
    assert "\x1b[" not in text


def test_logs_to_a_terminal_are_coloured_unless_no_color(
    environment: pytest.MonkeyPatch,
) -> None:
    assert "\x1b[" in logged(Terminal())
    environment.setenv("NO_COLOR", "1")
    assert "\x1b[" not in logged(Terminal())
    environment.delenv("NO_COLOR")
    environment.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in logged(io.StringIO())
