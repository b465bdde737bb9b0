"""The tool defaults an agent or a network may set for its tools, checked where they are set."""

from __future__ import annotations

from typing import Any

from network.errors import ConfigurationError
from network.numbers import check_number
from network.run.retry_policy import RetryPolicy


def check_tool_defaults(owner: str, tool_timeout: Any, tool_retry: Any) -> None:
    """`ConfigurationError` naming `owner` (`"agent 'a'"`, `"network 'n'"`) unless
    `tool_timeout` is None or a positive number of seconds and `tool_retry` None or a
    `RetryPolicy`."""
    check_number(f"{owner}: tool_timeout (seconds)", tool_timeout, above=True, optional=True)
    if tool_retry is not None and not isinstance(tool_retry, RetryPolicy):
        raise ConfigurationError(f"{owner}: tool_retry must be a RetryPolicy, got {tool_retry!r}")
