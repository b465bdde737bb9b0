"""`network.run.screening`: what a client may read of an exception raised inside a run."""

from __future__ import annotations

import logging
import re

import pytest
import structlog

from network.errors import RoutingError
from network.run.screening import screened


def test_a_library_error_reads_as_it_is() -> None:
    error = RoutingError("router of network 'n' returned 'nobody'")
    assert screened(error) == "router of network 'n' returned 'nobody'"


def test_any_other_exception_is_a_reference_logged_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    structlog.reset_defaults()  # stdlib logging, as an application that configured only that
    try:
        raise ConnectionError("cannot reach postgres://admin:hunter2@db/prod")
    except ConnectionError as error:
        with caplog.at_level(logging.ERROR, logger="agent_network"):
            text = screened(error, tool="orders", run_id="run_1")
    found = re.fullmatch(
        r"internal error \(reference (err_[0-9a-f]+)\); the server's log has the details", text
    )
    assert found is not None and "hunter2" not in text
    (record,) = caplog.records
    assert found.group(1) in record.getMessage() and "tool=orders" in record.getMessage()
    assert record.exc_info is not None and "hunter2" in caplog.text and "Traceback" in caplog.text


def test_with_structlog_the_line_goes_through_it(capsys: pytest.CaptureFixture[str]) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    try:
        text = screened(ValueError("token sk-secret"), tool="t")
    finally:
        structlog.reset_defaults()
    reference = text.split("reference ")[1].split(")")[0]
    logged = capsys.readouterr().out
    assert reference in logged and "sk-secret" in logged and "sk-secret" not in text
