"""A durable run's router step records a `Parallel` fan-out whole, as JSON, and replays it; a
durable run with a fan-out ends as a plain run does, each branch's steps named after it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import Network, Parallel, Stop, StopReason, durable
from network.durable import DurableConfigError
from network.durable.route_record import record_choice, replayed_choice
from tests.network.durable.fanout_network import STEPS, survey

model = ScriptedModel(lambda request: f"{request.agent} answered")
alpha = Agent("alpha", description="a", model=model)
beta = Agent("beta", description="b", model=model)
team = Network("pair", agents=[alpha, beta], router=lambda ctx: None)


def round_trip(choice: Any) -> Any:
    record = record_choice(team, choice)
    return replayed_choice(json.loads(json.dumps(record)))  # JSON data, all of it


def test_a_fan_out_is_recorded_whole_and_replayed_as_it_was() -> None:
    fork = Parallel.map(
        beta,
        [{"id": 1, "tags": ["x"]}, 7, None],
        input=lambda item: f"do {item}",
        on_error="continue",
        max_concurrency=2,
        name="batch",
        max_steps=3,
    )
    replayed = round_trip([alpha, fork, "beta"])
    assert replayed[0] == "alpha" and replayed[2] == "beta"
    again = replayed[1]
    assert isinstance(again, Parallel)
    # max_steps too: a durable run goes through the record live, so a fan-out's cap lost
    # here let its branches make the default 10 calls (and tool calls) each
    assert (again.name, again.on_error, again.max_concurrency, again.max_steps) == (
        "batch",
        "continue",
        2,
        3,
    )
    assert [(b.id, b.agent, b.index, b.input, b.item) for b in again.branches] == [
        ("batch/beta#0", "beta", 0, "do {'id': 1, 'tags': ['x']}", {"id": 1, "tags": ["x"]}),
        ("batch/beta#1", "beta", 1, "do 7", 7),
        ("batch/beta#2", "beta", 2, "do None", None),
    ]
    # the network resolves the replayed fan-out to the same agents
    bound = team.resolve([again])[0]
    assert [b.agent for b in bound.branches] == [beta, beta, beta]

    plain = round_trip(Parallel(alpha, beta))
    assert [(b.id, b.agent) for b in plain[0].branches] == [
        ("alpha+beta/alpha", "alpha"),
        ("alpha+beta/beta", "beta"),
    ]
    assert plain[0].on_error == "fail" and plain[0].max_concurrency is None
    assert plain[0].max_steps == 10
    # a record made before max_steps was kept reads back with the default
    older = record_choice(team, Parallel(alpha, beta))
    del older["queued"][0]["max_steps"]
    assert replayed_choice(older)[0].max_steps == 10


def test_stops_and_none_are_recorded_too() -> None:
    assert round_trip(None) is None
    stop = round_trip(Stop(StopReason.MAX_ITER, "enough"))
    assert stop == Stop(StopReason.MAX_ITER, "enough") and isinstance(stop.reason, StopReason)
    assert round_trip(Stop("my_reason")) == Stop("my_reason")


def test_a_decision_of_agents_only_is_the_records_model_form() -> None:
    from network.durable.route_record import RouteRecord

    for choice in ("alpha", [alpha, "beta"], None):
        record = record_choice(team, choice)
        model_form = RouteRecord.model_validate(record).model_dump(mode="json")
        assert json.dumps(record) == json.dumps(model_form)
    assert round_trip([alpha, "beta", "alpha"]) == ["alpha", "beta", "alpha"]
    # a record the quick form does not vouch for is read by the model (and refused by it)
    with pytest.raises(ValueError, match="queued"):
        replayed_choice({"queued": ["alpha", 3.5], "stop": None})
    assert replayed_choice({"queued": ["alpha"]}) == ["alpha"]  # an older record's keys


@pytest.mark.parametrize("item", [object(), (1, 2), {1: "a"}, float("nan")])
def test_an_item_that_is_not_json_data_is_refused_naming_the_branch(item: Any) -> None:
    fork = Parallel.map(beta, ["fine", item], name="batch")
    with pytest.raises(DurableConfigError, match=r"'batch'.*'batch/beta#1'"):
        record_choice(team, fork)


@pytest.fixture
def launched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AN_DURABLE_LOG", str(tmp_path / "effects.log"))
    db = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    durable.launch([survey], db=db)
    try:
        yield db
    finally:
        durable.shutdown()


@pytest.mark.anyio
async def test_a_durable_fan_out_ends_as_a_plain_one_each_branch_with_its_own_steps(
    launched: str,
) -> None:
    plain = await survey.run("go")
    run_id = f"run_{uuid.uuid4().hex[:8]}"
    result = await survey.run("go", durable=True, run_id=run_id)
    assert result.state.snapshot() == plain.state.snapshot()
    assert result.output == plain.output
    calls = [(r.agent, r.branch, r.text) for r in result.state.results]
    assert calls == [(r.agent, r.branch, r.text) for r in plain.state.results]
    client = durable.DurableClient(launched)
    try:
        steps = client._client.list_workflow_steps(run_id)
    finally:
        client.close()
    by_id = {s["function_id"]: s["function_name"] for s in steps}
    names = [name for name in by_id.values() if name in STEPS["survey"]]
    assert sorted(names) == sorted(name for name, n in STEPS["survey"].items() for _ in range(n))
    # branch i's k-th step is number fork + 1 + k * 3 + i: the branches interleave in
    # declared order, whatever order their calls came in
    fork = next(i for i, name in sorted(by_id.items()) if name == "router")
    for index, agent in enumerate(("researcher", "critic", "analyst")):
        mine = [by_id[fork + 1 + k * 3 + index] for k in range(4)]
        assert mine == [
            f"model:{agent}@survey/{agent}",
            f"tool:note@survey/{agent}",
            f"tool:tag@survey/{agent}",
            f"model:{agent}@survey/{agent}",  # its tool loop: the call that answers
        ]
    assert by_id[fork + 13] == "router"  # the run's next step comes right after them


@pytest.mark.anyio
async def test_a_durable_fan_out_over_items_that_are_not_json_fails_naming_the_branch(
    launched: str,
) -> None:
    objects = Network("objects", agents=[beta], router=lambda ctx: Parallel.map(beta, [object()]))
    durable.launch([objects], db=launched)
    with pytest.raises(DurableConfigError, match="beta.map/beta#0"):
        await objects.run("go", durable=True, run_id=f"run_{uuid.uuid4().hex[:8]}")


def flaky_answer(request: Any) -> Any:
    if request.agent == "beta":
        raise ValueError("beta's model is down")
    return f"{request.agent} answered"


@pytest.mark.anyio
@pytest.mark.parametrize("on_error", ["continue", "fail"])
async def test_a_failing_branch_ends_a_durable_run_as_it_ends_a_plain_one(
    launched: str, on_error: str
) -> None:
    flaky = ScriptedModel(flaky_answer)
    one, two = (
        Agent("alpha", description="a", model=flaky),
        Agent("beta", description="b", model=flaky),
    )
    first = Parallel(one, two, on_error=on_error)
    team = Network(
        f"flaky-{on_error}",
        agents=[one, two],
        router=lambda ctx: first if ctx.call_count == 0 else None,
    )
    durable.launch([team], db=launched)
    outcomes = []
    for durably in (False, True):
        extra: dict[str, Any] = {"durable": True, "run_id": f"run_{uuid.uuid4().hex[:8]}"}
        try:
            result = await team.run("go", **(extra if durably else {}))
        except ValueError as error:
            outcomes.append(("raised", str(error).splitlines()[0]))
        else:
            failed = [(f.branch, f.error_type, f.message) for f in result.failed_branches]
            calls = [(r.agent, r.branch, r.text, r.error) for r in result.state.results]
            outcomes.append((failed, calls))
    assert outcomes[0] == outcomes[1]
    if on_error == "continue":
        assert outcomes[0][0] == [("alpha+beta/beta", "ValueError", "beta's model is down")]
    else:
        assert outcomes[0] == ("raised", "beta's model is down")
