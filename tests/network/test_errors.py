"""The error tree: one base class to catch, errors that name what they are about, and the partial
result of a run that failed, reachable from any exception."""

from __future__ import annotations

import inspect

import pytest

import network
from network import errors
from network.errors import (
    AgentNetworkError,
    AgentNetworkWarning,
    InvalidIdError,
    StateValidationError,
    UnstorableValueError,
    attach_partial_result,
)


def test_every_error_the_library_exports_is_an_agent_network_error() -> None:
    exported = [
        value
        for name in network.__all__
        if inspect.isclass(value := getattr(network, name)) and issubclass(value, Exception)
        if not issubclass(value, Warning)
    ]
    assert exported, "network exports its errors"
    assert [cls.__name__ for cls in exported if not issubclass(cls, AgentNetworkError)] == []


def test_every_warning_the_library_exports_is_an_agent_network_warning() -> None:
    warnings = [
        getattr(errors, name)
        for name in dir(errors)
        if inspect.isclass(getattr(errors, name)) and issubclass(getattr(errors, name), Warning)
    ]
    assert len(warnings) >= 4
    assert all(issubclass(cls, AgentNetworkWarning) for cls in warnings)


def test_errors_name_what_they_are_about() -> None:
    unstorable = UnstorableValueError("no", key="lock", found="Lock")
    assert (unstorable.key, unstorable.expected, unstorable.found) == (
        "lock",
        "a JSON value",
        "Lock",
    )
    assert isinstance(unstorable, StateValidationError)
    bad_id = InvalidIdError("empty", field="thread_id")
    assert bad_id.field == "thread_id"
    with pytest.raises(ValueError, match="empty"):  # an id check reads as a ValueError too
        raise bad_id


def test_the_partial_result_reaches_any_exception_and_the_last_run_left_sets_it() -> None:
    foreign = ValueError("a router's own error")
    attach_partial_result(foreign, "inner")
    attach_partial_result(foreign, "outer")  # the run whose caller catches it now
    assert foreign.partial_result == "outer"  # type: ignore[attr-defined]

    class NoAttributes(Exception):  # an exception type that takes no new attribute
        def __setattr__(self, name: str, value: object) -> None:
            if name == "partial_result":
                raise AttributeError(name)
            super().__setattr__(name, value)

    closed = NoAttributes("closed")
    attach_partial_result(closed, "result")
    assert closed.__notes__ == ["partial result: 'result'"]
