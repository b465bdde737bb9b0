"""One way into a run: `run`, `run_sync`, `stream` and the durable path take the same options.

The options are declared once, on `Network.run`; `run_sync` and `stream` are made from it (a
`ParamSpec`), every way of carrying a run out takes them whole as a `RunOptions`, and the
durable engine records the data among them and attaches the live ones. These tests fail when
a new option reaches one of them and not the others.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import Network, Resume, ThreadRef, ToolResults
from network.durable.workflow import Attachments, RunRequest
from network.run.options import RunOptions
from network.run.thread_ref import ThreadKeywords

pytestmark = pytest.mark.anyio

# attached in the caller's process, not recorded
LIVE = {"deps", "resources", "limits", "usage", "budget", "sinks"}


def options_of(function: Any) -> dict[str, inspect.Parameter]:
    return {
        name: parameter
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


def test_run_sync_and_stream_have_runs_signature() -> None:
    run = inspect.signature(Network.run)
    assert inspect.signature(Network.run_sync).parameters == run.parameters
    assert inspect.signature(Network.stream).parameters == run.parameters
    assert inspect.signature(Agent.run_sync).parameters == inspect.signature(Agent.run).parameters


def test_runs_options_are_the_run_options_fields() -> None:
    fields = {field.name: field.default for field in dataclasses.fields(RunOptions)}
    declared = {name: parameter.default for name, parameter in options_of(Network.run).items()}
    assert declared == fields
    # the deprecated keywords are `**deprecated`, typed, and not options of their own
    var = [p for p in inspect.signature(Network.run).parameters.values() if p.kind is p.VAR_KEYWORD]
    assert [p.name for p in var] == ["deprecated"]
    assert set(ThreadKeywords.__annotations__) == {"thread_id", "user_id", "app_name", "store"}


def test_the_durable_path_records_or_attaches_every_option() -> None:
    recorded = set(RunRequest.model_fields)
    # `thread` is recorded as its parts, `state` and `max_iter` as themselves; `run_id` is the
    # workflow's id, `durable` what chose this path; the live ones wait in `Attachments`
    thread = {"thread_id", "user_id", "app_name", "store"}
    assert thread <= recorded
    data = {name for name in options_of(Network.run) if name not in LIVE}
    assert data - {"thread", "run_id", "durable"} <= recorded
    assert {field.name for field in dataclasses.fields(Attachments)} >= {"options"}
    assert {field.name for field in dataclasses.fields(RunOptions)} >= LIVE


def test_the_old_continuations_and_the_run_machinery_are_gone_with_a_clear_error() -> None:
    network = echo()
    for name, instead in [
        ("resume", "network.run(result.resume(answers)"),
        ("answer_tool_calls", "network.run(result.tool_results(results)"),
        ("run_with", "network.kernel.run(network, input, options)"),
        ("start", "network.run(input"),
        ("execute", "network.kernel.execute(network, ctx)"),
        ("resources_for", "network.run.resources.run_resources("),
    ]:
        assert not hasattr(Network, name)
        with pytest.raises(AttributeError, match=f"Network.{name} was removed") as gone:
            getattr(network, name)
        assert instead in str(gone.value)
    with pytest.raises(AttributeError, match="has no attribute 'resum'"):
        network.resum  # type: ignore[attr-defined]  # noqa: B018 (a typo stays a plain miss)


def test_constructors_are_keyword_only_after_the_name() -> None:
    for cls in (Network, Agent):
        parameters = list(inspect.signature(cls).parameters.values())
        assert parameters[0].name == "name"
        assert parameters[1].kind is inspect.Parameter.VAR_POSITIONAL  # the deprecated spelling
        assert all(p.kind is p.KEYWORD_ONLY for p in parameters[2:])


def test_no_public_signature_names_the_durable_hook() -> None:
    for method in (Network.run, Network.run_sync, Network.stream):
        assert "step_runner" not in inspect.signature(method).parameters
    with pytest.raises(TypeError, match="'step_runner': it was removed; the durable engine's"):
        echo().run_sync("go", step_runner=object())  # type: ignore[call-arg]


def echo() -> Network:
    return Network("echo", agents=[Agent("echo", model=ScriptedModel(lambda request: "hi"))])


async def test_the_old_spellings_still_work_and_warn(tmp_path: Any) -> None:
    store = str(tmp_path / "t.db")
    with pytest.warns(DeprecationWarning, match="agents, router by position"):
        network = Network("n", [Agent("a", model=ScriptedModel(["hi", "again"]))], None)
    with pytest.warns(DeprecationWarning, match="thread_id=, store= are deprecated"):
        first = await network.run("go", thread_id="t1", store=store)
    second = await network.run("more", thread=ThreadRef("t1", store=store))
    assert first.persisted and [m.content for m in second.messages] == [
        "go",
        "hi",
        "more",
        "again",
    ]


def test_an_agent_takes_its_options_by_keyword_only() -> None:
    from network.errors import ConfigurationError

    # The positional spelling of the first releases is gone: the error says how to write it.
    with pytest.raises(ConfigurationError, match=r"Agent\('b', description=\.\.\., system="):
        Agent("b", "writes", "Be brief.")


async def test_run_refuses_what_is_not_an_input() -> None:
    from network.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="takes a message"):
        await echo().run(42)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="needs the run it continues"):
        await echo().run(Resume([]))
    with pytest.raises(ConfigurationError, match="ToolResults takes"):
        ToolResults([1, 2])  # type: ignore[arg-type]


def test_run_sync_takes_a_continuation() -> None:
    network = echo()
    result = network.run_sync("hi", thread=None, max_iter=1)
    assert result.output == "hi"
