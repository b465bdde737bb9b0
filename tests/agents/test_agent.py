"""Agents: models, tool_choice, output_key, standalone runs (instructions and hooks: own files)."""

from typing import Any

import pytest

from agents import Agent, ScriptedModel, call, tool
from network import ConfigurationError, Network, StopReason
from tests.fakes.agents import solo


def one_call(agent: Agent, **kwargs) -> Network:
    return Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None, **kwargs
    )


def system_text(model: ScriptedModel, index: int = 0) -> str:
    return model.requests[index].system[0].content


@pytest.mark.anyio
async def test_instructions_may_be_a_sync_or_async_function_of_the_run() -> None:
    sync_model, async_model = ScriptedModel(["1"]), ScriptedModel(["2"])

    async def later(ctx):
        return f"async for {ctx.input}"

    first = Agent("s", system=lambda ctx: f"sync {ctx.call_count}", model=sync_model)
    second = Agent("t", system=later, model=async_model)
    network = Network(
        "n",
        agents=[first, second],
        router=lambda ctx: [first, second] if ctx.call_count == 0 else None,
    )
    await network.run("topic")
    assert system_text(sync_model) == "sync 0"
    assert system_text(async_model) == "async for topic"


@pytest.mark.parametrize("returned", [["be brief"], {"tone": "kind"}, 5])
def test_a_system_function_that_returns_no_text_is_refused_naming_the_agent(
    returned: object,
) -> None:
    """ADK's InstructionProvider and the Agents SDK's dynamic instructions return text; here
    `str()` of anything else was sent to the model (a list's Python repr as the prompt)."""
    model = ScriptedModel(["never"])
    agent = Agent("a", system=lambda ctx: returned, model=model)
    with pytest.raises(ConfigurationError, match=r"agent 'a': the system function returned"):
        one_call(agent).run_sync("x")
    assert model.requests == []
    none = ScriptedModel(["ok"])
    one_call(Agent("b", system=lambda ctx: None, model=none)).run_sync("x")
    assert none.requests[0].system == []


@pytest.mark.parametrize("system", [lambda: "Be brief.", lambda ctx, tone: tone])
def test_a_system_function_not_callable_with_the_run_context_is_refused_when_set(
    system: Any,
) -> None:
    """`system=lambda: "..."` was taken, and every call of the agent failed with a TypeError
    from inside the run ("takes 0 positional arguments but 1 was given")."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': the system function .* system"):
        Agent("a", system=system)
    agent = Agent("a", system="Be brief.")
    with pytest.raises(ConfigurationError, match=r"agent 'a': the system function"):
        agent.system = system
    assert agent.system == "Be brief."  # left as it was
    for fine in (lambda ctx: "x", lambda ctx, tone="kind": tone, lambda *args: "x", print):
        assert Agent("b", system=fine).system is fine


def test_instructions_or_a_description_no_request_can_carry_are_refused_naming_the_agent() -> None:
    """A lone surrogate in `system` (or `description`, which a routing prompt or `as_tool`'s
    schema sends) was accepted; every request then failed with a ModelError "request failed:
    UnicodeEncodeError", and a scripted run recorded a prompt no thread store could keep."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': system holds a lone surrogate"):
        Agent("a", system="Be brief.\ud800")
    with pytest.raises(ConfigurationError, match=r"agent 'a': description holds a lone"):
        Agent("a", description="\udc00 helper")
    agent = Agent("a", system="Be brief.")
    with pytest.raises(ConfigurationError, match=r"agent 'a': system holds a lone surrogate"):
        agent.system = "{topic?}\ud800"
    assert agent.system == "Be brief."  # left as it was
    model = ScriptedModel(["never"])
    agent = Agent("a", system=lambda ctx: "Be brief.\ud800", model=model)
    with pytest.raises(ConfigurationError, match=r"agent 'a': the system function returned .*"):
        one_call(agent).run_sync("x")
    assert model.requests == []
    paired = ScriptedModel(["ok"])  # a surrogate pair is one character with a UTF-8 form
    one_call(Agent("b", system=lambda ctx: "\U0001f600", model=paired)).run_sync("x")
    assert paired.requests[0].system[0].content == "\U0001f600"


@pytest.mark.anyio
async def test_agents_fall_back_to_the_network_default_model() -> None:
    shared = ScriptedModel(["from default"])
    agent = Agent("a")
    result = await one_call(agent, default_model=shared).run("x")
    assert result.output == "from default"
    with pytest.raises(ConfigurationError, match="no model"):
        await one_call(Agent("b")).run("x")


@pytest.mark.anyio
async def test_tool_choice_is_sent_and_validated() -> None:
    @tool
    def lookup(q: str) -> str:
        return q

    model = ScriptedModel(["fine"])
    agent = Agent("a", tools=[lookup], tool_choice="lookup", model=model)
    await one_call(agent).run("x")
    assert model.requests[0].tool_choice == "lookup"
    assert model.requests[0].tool_names == ["lookup"]
    for choice in ("auto", "required", "none"):
        Agent("ok", tools=[lookup], tool_choice=choice)
    with pytest.raises(ConfigurationError, match="nope"):
        Agent("bad", tools=[lookup], tool_choice="nope")


@pytest.mark.parametrize("key", ["", 3, ["plan"]])
def test_an_output_key_that_is_no_state_key_is_refused_when_the_agent_is_made(key: object) -> None:
    """ADK's `output_key` (docs/coming-from-adk.md): `output_key=""` stored nothing, silently,
    and `output_key=3` failed only when the run stored the answer, after the model call."""
    with pytest.raises(ConfigurationError, match=r"agent 'writer': output_key must be a state"):
        Agent("writer", model=ScriptedModel(["the plan"]), output_key=key)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", [3, "", {"api_base": "http://x"}, object(), ScriptedModel])
def test_a_model_that_is_no_model_is_refused_when_the_agent_is_made(model: object) -> None:
    """`model=3` was accepted and failed at the first call with a TypeError; a model class
    given for an instance (`model=ScriptedModel`), with an AttributeError from inside it."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': model"):
        Agent("a", model=model)  # type: ignore[arg-type]
    agent = Agent("a")
    with pytest.raises(ConfigurationError, match=r"agent 'a': model"):
        agent.model = model  # type: ignore[assignment]
    assert agent.model is None  # left as it was


@pytest.mark.parametrize("name", ["clerk\ud800", "clerk\x00"])
def test_a_name_no_thread_store_can_keep_is_refused_when_the_agent_is_made(name: str) -> None:
    """`Agent("clerk\\ud800")` was accepted, ran, and its first commit to a SQL thread store
    failed with an opaque ThreadStoreError (every result records its agent's name)."""
    with pytest.raises(ConfigurationError, match=r"the name holds NUL or a lone surrogate"):
        Agent(name, model=ScriptedModel(["hi"]))
    renamed = Agent("clerk", model=ScriptedModel(["hi"]))
    renamed.name = name  # a custom agent's name, or one changed later: the network checks
    with pytest.raises(ConfigurationError, match=r"network 'n': agent name .* lone surrogate"):
        Network("n", agents=[renamed])


@tool
def _lookup(query: str) -> str:
    """Look something up."""
    return query


@pytest.mark.parametrize("tools", [_lookup, "lookup", {"lookup": _lookup}, lambda: "x"])
def test_tools_that_are_no_list_are_refused_naming_the_agent(tools: object) -> None:
    """`tools=one_tool` was "'Tool' object is not iterable" (a string: a tool per letter)."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': tools must be a list of tools"):
        Agent("a", tools=tools)  # type: ignore[arg-type]
    assert list(Agent("a", tools=None).tools) == []  # type: ignore[arg-type]
    assert list(Agent("a", tools=(_lookup,)).tools) == ["_lookup"]


@pytest.mark.parametrize("item", [None, 3, "lookup", b"lookup"])
def test_a_tools_item_that_is_no_tool_is_refused_naming_the_agent_and_the_item(
    item: object,
) -> None:
    """`tools=[None]` (a list built with a conditional) was "'function' object has no
    attribute 'name'", `tools=[3]` "@tool needs a function", naming no agent."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': tools\[1\] is not a tool"):
        Agent("a", tools=[_lookup, item])  # type: ignore[list-item]


@pytest.mark.parametrize("choice", [["lookup"], {"type": "function"}, None, 3])
def test_a_tool_choice_that_is_no_text_is_refused_naming_the_agent(choice: object) -> None:
    """`tool_choice=["lookup"]` (OpenAI's list of allowed tools) was a TypeError,
    "unhashable type: 'list'"."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': tool_choice"):
        Agent("a", tools=[_lookup], tool_choice=choice)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("option", "value", "refusal"),
    [
        ("output_key", 3, "output_key must be a state key"),
        ("tool_choice", "nope", "tool_choice 'nope' is not one of"),
        ("tools", [], "tool_choice '_lookup' is not one of"),  # the tool it must call
        ("params", {"temperature": float("nan")}, "parameter 'temperature' must be a finite"),
        ("stream", "yes", "stream must be True or False"),
        ("view", "some", "view must be 'all', 'input' or a function"),
        ("input_guardrails", 3, "input_guardrails must be a list"),
        ("tool_timeout", -1, "tool_timeout"),
    ],
)
def test_an_option_set_later_is_checked_as_the_constructor_checks_it(
    option: str, value: object, refusal: str
) -> None:
    """`agent.output_key = 3` was taken and failed mid-run with a TypeError, `agent.view =
    "some"` was kept though refused, `agent.params = {"temperature": nan}` was sent."""
    agent = Agent("a", tools=[_lookup], tool_choice="_lookup", model=ScriptedModel(["ok"]))
    before = getattr(agent, option)
    with pytest.raises(ConfigurationError, match=rf"agent 'a': {refusal}"):
        setattr(agent, option, value)
    assert getattr(agent, option) == before  # left as it was
    assert agent.run_sync("x").output == "ok"


def test_options_set_later_take_effect_and_clone_copies_them() -> None:
    """`clone` copied the options the constructor was given, not those set since."""
    agent = Agent("a", system="old", output_key="draft", model=ScriptedModel(["ok"]))
    agent.system, agent.output_key, agent.tools = "new", "answer", [_lookup]
    agent.tool_choice = "_lookup"
    copy = agent.clone(name="b", model=ScriptedModel(["ok"]))
    assert (copy.system, copy.output_key, list(copy.tools), copy.tool_choice) == (
        "new",
        "answer",
        ["_lookup"],
        "_lookup",
    )
    assert [schema["function"]["name"] for schema in copy._tool_schemas] == ["_lookup"]
    assert copy.run_sync("x").state.kv.get("answer") == "ok"
    agent.tool_choice = "auto"
    agent.tools = {}  # the form `agent.tools` reads as, too
    assert (agent.tools, agent._tool_schemas) == ({}, [])


def test_a_misspelled_output_mode_is_refused_without_an_output_type_too() -> None:
    """`output_mode="tools"` was taken silently until an `output_type` was added."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': output_mode 'tools' is not one"):
        Agent("a", output_mode="tools")
    assert Agent("a", output_mode="prompted").output is None


@pytest.mark.parametrize("description", [3, b"bytes", ["a list"]])
def test_a_description_that_is_no_string_is_refused_when_the_agent_is_made(
    description: object,
) -> None:
    """The routing agent and `as_tool` read it as text: `description=3` was accepted."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': description must be a string"):
        Agent("a", description=description)  # type: ignore[arg-type]
    assert Agent("a", description=None).description == ""  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_output_key_stores_the_final_text() -> None:
    agent = Agent("writer", model=ScriptedModel(["the plan"]), output_key="plan")
    result = await one_call(agent).run("x")
    assert result["plan"] == "the plan"
    assert result.results[0].state_delta == [{"op": "add", "path": "/plan", "value": "the plan"}]


@pytest.mark.anyio
async def test_standalone_run_loops_until_text_with_tool_results_in_the_next_request() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    model = ScriptedModel([call("add", a=2, b=3), "The sum is 5."])
    agent = Agent("calc", tools=[add], model=model)
    result = await agent.run("2+3?", max_steps=5)
    assert result.output == "The sum is 5."
    second = model.requests[1].history
    assert [m.role for m in second] == ["user", "assistant", "tool"]
    assert second[-1].content == "5"
    assert second[-1].tool_call_id == second[-2].tool_calls[0].id


@pytest.mark.anyio
async def test_standalone_run_stops_at_max_steps() -> None:
    @tool
    def again() -> str:
        return "more"

    agent = Agent("loop", tools=[again], model=ScriptedModel([call("again")], repeat_last=True))
    result = await agent.run("x", max_steps=3)
    assert result.stop_reason == StopReason.MAX_ITER
    assert len(result.results) == 3


@pytest.mark.parametrize("max_steps", [0, -1, float("nan"), float("inf"), True, 2.5, "3"])
def test_max_steps_that_is_no_count_is_refused_naming_max_steps(max_steps: object) -> None:
    """Haystack's `max_agent_steps` is `agent.run(max_steps=...)`, and the step cap of
    `agent.as_tool(max_steps=...)` (ADK's `AgentTool`, the Agents SDK's `as_tool`): a bad
    one named the inner network's `max_iter`, and `as_tool` took it, failing every call."""
    agent = Agent("helper", model=ScriptedModel(["done"]))
    with pytest.raises(ConfigurationError, match=r"agent 'helper': max_steps must be an int"):
        agent.run_sync("x", max_steps=max_steps)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"agent 'helper': max_steps must be an int"):
        agent.as_tool(description="Helps.", max_steps=max_steps)  # type: ignore[arg-type]


@pytest.mark.parametrize("model", [3, "", {"api_base": "http://x"}, object()])
def test_a_run_model_that_is_no_model_is_refused_naming_model(model: object) -> None:
    """`agent.run(..., model=3)` named the `default_model` of the network it builds, an
    option the caller never passed."""
    agent = Agent("helper")
    with pytest.raises(ConfigurationError, match=r"agent 'helper': model ") as refused:
        agent.run_sync("x", model=model)  # type: ignore[arg-type]
    assert "default_model" not in str(refused.value)


@pytest.mark.anyio
@pytest.mark.usefixtures("quiet_logs")
async def test_output_key_stores_the_final_answer_not_the_text_beside_a_tool_call() -> None:
    @tool
    def search(query: str) -> str:
        """Search the docs."""
        return "the docs say 42"

    from network.history.messages import AssistantMessage, ToolCall

    look = AssistantMessage(
        "Let me look that up.", tool_calls=[ToolCall("c1", "search", {"query": "q"})]
    )
    agent = Agent(
        "researcher",
        tools=[search],
        model=ScriptedModel([look, "The answer is 42."]),
        output_key="answer",
    )
    seen: list[bool] = []

    def route(ctx: Any) -> Any:  # the README's pattern: run until the key is there
        seen.append(ctx.kv.has("answer"))
        return None if ctx.kv.has("answer") else agent

    result = await Network("n", agents=[agent], router=route).run("what is it?")
    assert seen == [False, False, True]  # not set by the first call's "Let me look that up."
    assert result["answer"] == "The answer is 42."


@pytest.mark.usefixtures("quiet_logs")
@pytest.mark.anyio
async def test_run_sync_inside_a_running_loop_says_to_await_run() -> None:
    network = Network("n", agents=[solo("hi")])
    with pytest.raises(ConfigurationError, match=r"use `await network.run\(...\)`"):
        network.run_sync("go")
    with pytest.raises(ConfigurationError, match=r"agent 'solo'.*`await network.run"):
        solo("hi").run_sync("go")


@pytest.mark.usefixtures("quiet_logs")
def test_agent_run_sync_says_the_agent_answered() -> None:
    result = solo(call("lookup", query="x"), "It is x.").run_sync("what is x?")
    assert result.stop_reason == StopReason.AGENT_ANSWERED == "agent_answered"
    assert result.output == "It is x." and len(result.results) == 2


@pytest.mark.usefixtures("quiet_logs")
def test_a_lone_agent_out_of_steps_says_max_iter() -> None:
    agent = solo(call("lookup", query="x"), call("lookup", query="y"))
    assert agent.run_sync("go", max_steps=2).stop_reason == StopReason.MAX_ITER


@pytest.mark.usefixtures("quiet_logs")
def test_a_lone_agent_skipped_by_its_hook_says_so() -> None:
    def skip(call_: Any) -> None:
        call_.skip = True

    agent = Agent("shy", model=ScriptedModel([]), hooks={"on_start": skip})
    assert agent.run_sync("go").stop_reason == StopReason.AGENT_SKIPPED


@pytest.mark.usefixtures("quiet_logs")
def test_agent_state_schema_says_where_the_schema_goes() -> None:
    with pytest.raises(ConfigurationError, match=r"Network\(\.\.\., state_schema=\.\.\.\)"):
        Agent("a", state_schema={"plan": {"type": str}})  # type: ignore[arg-type]


@pytest.mark.parametrize("retries", [-1, 1.5, float("nan"), float("inf"), None])
def test_output_retries_out_of_range_are_refused_without_an_output_type(retries: object) -> None:
    with pytest.raises(ConfigurationError, match=r"agent 'a': output_retries"):
        Agent(name="a", model=ScriptedModel(["hi"]), output_retries=retries)  # type: ignore[arg-type]
