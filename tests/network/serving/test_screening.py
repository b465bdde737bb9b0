"""Error screening: the library's errors as they are, anything else a logged reference."""

from __future__ import annotations

import logging

import pytest

from network.errors import RoutingError
from network.serving.errors import RequestError
from network.serving.screening import INTERNAL_ERROR, guarded, screened

pytestmark = pytest.mark.anyio

SECRET = "postgres://admin:hunter2@db.internal/prod"


def test_a_library_error_is_told_as_it_is() -> None:
    message, code = screened(RoutingError("no agent 'x'"), logger="t", event="t.failed")
    assert (message, code) == ("RoutingError: no agent 'x'", "RoutingError")


def test_any_other_error_is_a_reference_and_the_log_has_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    try:
        raise ConnectionError(f"cannot reach {SECRET}")
    except ConnectionError as error:
        with caplog.at_level(logging.ERROR, logger="protocol"):
            message, code = screened(error, logger="protocol", event="p.failed", run_id="r1")
    assert code == INTERNAL_ERROR and "hunter2" not in message
    reference = message.split("reference ")[1].split(")")[0]
    (record,) = caplog.records
    assert record.getMessage().startswith("p.failed") and reference in record.getMessage()
    assert "run_id=r1" in record.getMessage()
    assert record.exc_info is not None and "hunter2" in str(record.exc_info[1])


async def test_a_store_failure_is_store_failed_without_its_text() -> None:
    async def failing() -> None:
        raise OSError(f"lost connection to {SECRET}")

    with pytest.raises(RequestError) as refused:
        await guarded("get_thread", failing())
    assert refused.value.status == 500 and refused.value.code == "store_failed"
    assert "hunter2" not in refused.value.message and "reference err_" in refused.value.message

    async def refusing() -> None:
        raise RequestError(404, "thread_not_found", "no thread 't'")

    with pytest.raises(RequestError) as passed:
        await guarded("get_thread", refusing())
    assert passed.value.code == "thread_not_found"  # a refusal passes as it is
