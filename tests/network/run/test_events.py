"""The typed events of a run (`network.run.events`): what the library's own consumers read.

A run emits them only when it has a sink; an `Observer` or `Listener` reads them as they are,
a caller's sink reads their AG-UI encoding (the same events, in the same order).
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from ag_ui.core import BaseEvent

from network.run import events as ev
from network.run.agui_encoder import encode
from network.run.emitter import Emitter, Listener, Observer
from tests.network.agui.networks import codegen_network

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

EVENT_CLASSES = [
    cls
    for name in ev.__all__
    if inspect.isclass(cls := getattr(ev, name)) and issubclass(cls, ev.RunEvent)
]


def forbid_building_events(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(self: Any, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a {type(self).__name__} was built")

    for cls in EVENT_CLASSES:
        monkeypatch.setattr(cls, "__init__", forbidden)


async def test_a_run_without_a_sink_builds_no_event(monkeypatch: pytest.MonkeyPatch) -> None:
    forbid_building_events(monkeypatch)
    result = await codegen_network().run("go")
    assert result.state.kv.get("review")["approved"] is True
    # the same run with a sink does build them: the check above is not vacuous
    with pytest.raises(AssertionError, match="was built"):
        await codegen_network().run("go", sinks=[Observer(lambda event: None)])


async def test_the_librarys_consumers_read_typed_events_a_callers_sink_their_agui_form() -> None:
    typed: list[Any] = []
    wire: list[Any] = []
    await codegen_network().run("go", sinks=[wire.append, Observer(typed.append)])

    assert typed and all(isinstance(event, ev.RunEvent) for event in typed)
    assert wire and all(isinstance(event, BaseEvent) for event in wire)
    assert isinstance(typed[0], ev.RunStarted) and isinstance(typed[1], ev.StateSnapshot)
    assert isinstance(typed[-1], ev.RunFinished)
    steps = [event.name for event in typed if isinstance(event, ev.StepStarted)]
    assert steps == ["planner", "coder", "reviewer", "coder", "reviewer"]
    # the caller's sink saw exactly the encoding of what the consumer saw, in order
    encoded = [model for event in typed for model in encode(event)]
    assert [m.model_dump_json(by_alias=True, exclude_none=True) for m in encoded] == [
        m.model_dump_json(by_alias=True, exclude_none=True) for m in wire
    ]


def test_an_observer_never_makes_a_model_stream_a_listener_and_a_callers_sink_do() -> None:
    assert Emitter([Observer(print)]).streaming is False
    assert Emitter([Listener(print)]).streaming is True
    assert Emitter([print]).streaming is True
    assert Emitter([Observer(print), Listener(print)]).streaming is True


def test_where_an_event_happened_rides_on_every_event() -> None:
    event = ev.ToolCallArgs("call_1", '{"a"', branch="a+b/a", subagent_run_id="sub_1")
    assert (event.call_id, event.delta, event.branch, event.subagent_run_id) == (
        "call_1",
        '{"a"',
        "a+b/a",
        "sub_1",
    )
    assert not hasattr(event, "__dict__")  # slotted: cheap to make, no stray attributes
    assert isinstance(ev.RunInterrupted("t", "r"), ev.RunFinished)
    assert isinstance(ev.RunCancelled("t", "r"), ev.RunFinished)
    assert ev.MemoryRecalled({"keys": []}).name == "MemoryRecalled"
