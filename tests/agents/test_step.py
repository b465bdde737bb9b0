"""`agents.step`: the agent call's stages, as the kernel runs them without any capability."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agents import Agent, AgentCall, ScriptedModel, ToolContext, call, tool
from network import Capability, InferenceResult, ModelError, Network
from network.history.messages import AssistantMessage, ToolCall
from network.history.model_io import ModelResponse
from network.history.results import Usage
from network.run.stages import NO_STAGES

pytestmark = pytest.mark.anyio


async def test_an_agent_with_no_capability_runs_no_stage_but_its_own() -> None:
    agent = Agent("plain", system="Be plain.", model=ScriptedModel(["done"]), output_key="out")
    assert agent.capabilities == ()
    result = await Network("n", agents=[agent]).run("go")
    stages = agent.stages(
        result.state.results and Network("x", agents=[agent])._run_stages.capabilities
    )
    assert stages.instructions == stages.request == stages.record == ()
    assert result["out"] == "done" and result.results[0].prompt[0].content == "Be plain."


async def test_a_skipped_call_is_recorded_skipped() -> None:
    def skip(agent_call: Any) -> None:
        agent_call.skip = True

    agent = Agent("a", model=ScriptedModel([]), hooks={"on_start": skip})
    result = await Network("n", agents=[agent]).run("go")
    assert result.results[0].skipped and result.results[0].output == []


async def test_a_tool_call_of_no_tool_is_an_error_result_naming_the_tools() -> None:
    agent = Agent("a", model=ScriptedModel([call("nope"), "ok"]))
    network = Network(
        "n",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )
    result = await network.run("go")
    record = result.results[0].tool_calls[0]
    assert record.is_error and "unknown tool 'nope'" in record.content
    assert NO_STAGES.capabilities == ()


class _Unchanged(Capability):
    """A capability that changes nothing: the step runs its staged call for it."""

    async def record(self, call: AgentCall, result: InferenceResult) -> InferenceResult:
        return result


def _comparable(result: InferenceResult) -> dict[str, Any]:
    """What a call's record says, but when it ran and for how long, and its answers' message
    ids (fresh for every run when anything listens to the run's events: structlog configured
    by an earlier test in the same process, say)."""
    fields = result.to_dict()
    for timed in ("started_at", "duration_ms"):
        fields.pop(timed)
    for record in fields["tool_calls"]:
        record.pop("started_at"), record.pop("duration_ms")
    for message in (*fields["output"], *fields["history"]):
        if message["role"] == "assistant":
            message.pop("id")
    return fields


@pytest.mark.parametrize("output_key", [None, "out"])
async def test_a_call_nothing_else_sees_records_what_the_staged_call_records(
    output_key: str | None,
) -> None:
    # The plain call (`AgentStep._plain_call`: no capability, sink or recorder) skips the
    # `AgentCall`; what it records and writes must be what the stages would, tools included.
    @tool
    def note(text: str, ctx: ToolContext) -> str:
        """Keep a note."""
        ctx.kv.set("notes", [*ctx.kv.get("notes", []), text])
        return f"noted {text}"

    async def run(capabilities: list[Capability]) -> Any:
        asked = [ToolCall("c1", "note", {"text": "a"}), ToolCall("c2", "nope", {})]
        model = ScriptedModel([*asked, "done"])
        agent = Agent(
            "a", system="Take notes.", tools=[note], model=model, output_key=output_key,
            capabilities=capabilities,
        )  # fmt: skip

        def until_answered(ctx: Any) -> Any:
            last = ctx.last_result
            return agent if last is None or last.tool_calls else None

        return await Network("n", agents=[agent], router=until_answered).run("go")

    plain, staged = await run([]), await run([_Unchanged()])
    assert [_comparable(r) for r in plain.results] == [_comparable(r) for r in staged.results]
    assert plain.state.kv.data == staged.state.kv.data
    assert [(w.key, w.op, w.writer) for w in plain.state.kv.write_log] == [
        (w.key, w.op, w.writer) for w in staged.state.kv.write_log
    ]
    assert (
        plain.results[0].offered_tools
        and plain.results[0].offered_tools[0]["function"]["name"] == "note"
    )
    assert plain.output == staged.output == "done" and len(plain.results) == 3
    assert plain["notes"] == ["a"] and plain.results[1].tool_calls[0].is_error


class _Answering:
    """A model of one's own answering `answer` as it is."""

    name = "mine"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def complete(self, request: Any, on_chunk: Any = None) -> Any:
        return self.answer


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (None, "answered None, not a ModelResponse"),
        ("Hello", "answered a str, not a ModelResponse"),
        (ModelResponse(None), "message is None"),  # type: ignore[arg-type]
        (ModelResponse(AssistantMessage(5)), "content is an int, not text"),  # type: ignore[arg-type]
        (ModelResponse(AssistantMessage(None, ["x"])), "tool_calls[0] is a str"),  # type: ignore[list-item]
        (
            ModelResponse(AssistantMessage(None, [ToolCall(None, "x", {})])),  # type: ignore[arg-type]
            "tool_calls[0] has an id that is None",
        ),
        (ModelResponse(AssistantMessage("Hi"), usage=None), "usage is None"),  # type: ignore[arg-type]
        (ModelResponse(AssistantMessage("Hi"), usage=Usage("3")), "prompt_tokens is a str"),  # type: ignore[arg-type]
    ],
)
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_custom_models_answer_of_the_wrong_shape_is_a_model_error(
    answer: Any, said: str, streamed: bool
) -> None:
    """Read as it was, such an answer failed the run with an error naming neither the model
    nor the agent (`AttributeError: 'NoneType' object has no attribute 'message'`, a
    `TypeError` summing usage, a pydantic error of an AG-UI event when streamed)."""
    network = Network("n", agents=[Agent("writer", model=_Answering(answer))])
    with pytest.raises(
        ModelError, match=f"model 'mine' of agent 'writer' .*{re.escape(said)}"
    ) as raised:
        if streamed:
            async for _ in network.stream("Hi"):
                pass
        else:
            await network.run("Hi")
    assert raised.value.model == "mine"


async def test_tool_call_ids_a_custom_model_repeats_or_leaves_empty_are_made_distinct() -> None:
    """Two calls sharing an id answered, streamed and were approved as one (each `ToolMessage`
    and AG-UI event carried the same id); the shipped clients mint ids of their own, and a
    custom model's answer gets the same: the first keeps its id, the others fresh ones."""
    calls = [ToolCall("c1", "add", {"x": 1}), ToolCall("c1", "add", {"x": 2})]
    calls.append(ToolCall("", "add", {"x": 3}))
    answer = ModelResponse(AssistantMessage(None, calls))
    seen: list[int] = []

    @tool
    def add(x: int) -> int:
        """Add x."""
        seen.append(x)
        return x

    agent = Agent("adder", model=ScriptedModel([answer]), tools=[add])
    result = await Network("n", agents=[agent]).run("go")
    ids = [record.id for record in result.results[0].tool_calls]
    assert seen == [1, 2, 3] and ids[0] == "c1" and len(set(ids)) == 3 and all(ids)
    message = result.results[0].output[0]
    assert [call.id for call in message.tool_calls] == ids  # what the next request sends
    assert [call.id for call in answer.message.tool_calls] == ["c1", "c1", ""]  # script kept


class _PlainDef:
    """A model of one's own whose `complete` is a plain def returning its answer."""

    name = "plain"

    def complete(self, request: Any, on_chunk: Any = None):  # type: ignore[no-untyped-def]
        return ModelResponse(AssistantMessage("Hi"))


class _Handing:
    """A wrapper whose `complete` is a plain def returning another model's coroutine."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def complete(self, request: Any, on_chunk: Any = None) -> Any:
        return self.inner.complete(request, on_chunk)


@pytest.mark.parametrize("how", ["run", "stream", "hooks", "budget", "router"])
async def test_a_custom_models_plain_def_complete_is_a_model_error_naming_it(
    how: str, tmp_path: Any
) -> None:
    """It failed the first request with `TypeError: object ModelResponse can't be used in
    'await' expression`, naming neither the model nor the agent, on every path a request
    takes (plain, streamed, through a capability, metered by a shared budget, a routing
    agent's)."""
    from agents import AgentHooks
    from network import SharedBudget
    from routers import routing_agent

    model = _PlainDef()
    hooks = AgentHooks(on_start=lambda *args: None) if how == "hooks" else None
    agent = Agent("writer", model=ScriptedModel(["Hi"]) if how == "router" else model, hooks=hooks)
    router = routing_agent(model=model, name="picker") if how == "router" else None
    network = Network("n", agents=[agent], router=router)
    asker = "picker" if how == "router" else "writer"
    with pytest.raises(
        ModelError,
        match=rf"model 'plain' of agent '{asker}': its complete\(\) returned a ModelResponse, "
        r"not an awaitable: a Model defines `async def complete",
    ) as raised:
        if how == "stream":
            async for _ in network.stream("Hi"):
                pass
        elif how == "budget":
            budget = SharedBudget("k", max_tokens=100_000, store=f"sqlite:///{tmp_path}/b.db")
            await network.run("Hi", budget=budget)
        else:
            await network.run("Hi")
    assert raised.value.model == "plain"
    assert raised.value.partial_result is not None


async def test_a_plain_def_complete_that_returns_a_coroutine_is_a_model() -> None:
    wrapped = Agent("writer", model=_Handing(ScriptedModel(["Hi"], repeat_last=True)))
    assert (await Network("n", agents=[wrapped]).run("Hi")).output == "Hi"
    async for _ in Network("n", agents=[wrapped]).stream("Hi"):
        pass
