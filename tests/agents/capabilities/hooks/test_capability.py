"""Agent hooks: `on_start`, `on_response` and `on_finish` on the `AgentCall` they receive."""

import dataclasses

import pytest

from agents import Agent, AgentHooks, ScriptedModel, call, tool
from network import ConfigurationError, Network


def one_call(agent: Agent, **kwargs) -> Network:
    return Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None, **kwargs
    )


@pytest.mark.anyio
async def test_on_start_can_rewrite_the_prompt_and_history() -> None:
    from network import SystemMessage

    def on_start(call):
        call.prompt = [SystemMessage(content="rewritten")]
        call.history = list(call.history)[-1:]

    model = ScriptedModel(["ok"])
    agent = Agent("a", system="original", model=model, hooks={"on_start": on_start})
    await one_call(agent).run("question")
    request = model.requests[0]
    assert [m.content for m in request.system] == ["rewritten"]
    assert [m.content for m in request.history] == ["question"]


@pytest.mark.anyio
async def test_on_start_can_skip_the_call() -> None:
    model = ScriptedModel([])
    agent = Agent(
        "a", model=model, hooks=AgentHooks(on_start=lambda call: setattr(call, "skip", True))
    )
    result = await one_call(agent).run("x")
    assert model.requests == []
    assert result.results[0].skipped
    assert len(result.messages) == 1  # only the user's input


@pytest.mark.anyio
async def test_on_response_runs_before_tools_and_can_drop_tool_calls() -> None:
    ran = []

    @tool
    def dangerous() -> str:
        ran.append(True)
        return "boom"

    async def on_response(call):
        assert call.response.message.tool_calls[0].name == "dangerous"
        call.response.message.tool_calls = []
        call.response.message.content = "I will not."

    agent = Agent(
        "a",
        tools=[dangerous],
        model=ScriptedModel([call("dangerous")]),
        hooks={"on_response": on_response},
    )
    result = await one_call(agent).run("x")
    assert ran == []
    assert result.output == "I will not."


@pytest.mark.anyio
async def test_on_finish_decides_what_history_keeps() -> None:
    from network import AssistantMessage

    def on_finish(call):
        return dataclasses.replace(
            call.result, output=[AssistantMessage(content="redacted", name="a")]
        )

    agent = Agent("a", model=ScriptedModel(["secret"]), hooks={"on_finish": on_finish})
    result = await one_call(agent).run("x")
    assert result.output == "redacted"
    assert result.messages[-1].content == "redacted"


@pytest.mark.parametrize("hooks", [3, "on_start", [print]])
def test_hooks_that_are_no_hooks_are_refused_naming_the_agent(hooks: object) -> None:
    """`Agent(hooks=3)` raised a bare TypeError naming neither the agent nor the option."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': hooks must be AgentHooks"):
        Agent("a", hooks=hooks)  # type: ignore[arg-type]
    agent = Agent("a")
    with pytest.raises(ConfigurationError, match=r"agent 'a': hooks must be AgentHooks"):
        agent.hooks = hooks  # type: ignore[assignment]
    assert agent.hooks.empty  # left as it was


def test_a_hook_that_is_no_function_is_refused_when_it_is_given() -> None:
    """`AgentHooks(on_start=3)` was accepted and failed at the agent's first call."""
    with pytest.raises(ConfigurationError, match=r"AgentHooks: on_start must be a function"):
        AgentHooks(on_start=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"AgentHooks: on_finish must be a function"):
        AgentHooks(on_finish="log")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"agent 'a': hooks\['on_response'\] must be a"):
        Agent("a", hooks={"on_response": 3})
    with pytest.raises(ConfigurationError, match=r"agent 'a': unknown hooks \['on_end'\]"):
        Agent("a", hooks={"on_end": print})
    assert AgentHooks(on_start=print, on_finish=None).on_start is print


def test_a_hook_not_callable_with_the_call_is_refused_when_it_is_given() -> None:
    """`hooks={"on_start": lambda: log()}` was taken, and every call of the agent failed
    with a TypeError from inside the run ("takes 0 positional arguments but 1 was given")."""
    with pytest.raises(ConfigurationError, match=r"agent 'a': hooks\['on_start'\] .* hook\(call\)"):
        Agent("a", hooks={"on_start": lambda: None})
    with pytest.raises(ConfigurationError, match=r"AgentHooks: on_finish .* cannot be called"):
        AgentHooks(on_finish=lambda call, result: result)

    async def on_response(call, *, note: str = "") -> None:
        return None

    assert Agent("a", hooks={"on_response": on_response}).hooks.on_response is on_response


def _set(field: str, value: object):
    return lambda call: setattr(call, field, value)


def _edit_content(call) -> None:
    call.response.message.content = 5


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("hooks", "expected"),
    [
        ({"on_start": _set("prompt", 5)}, r"hook on_start left call.prompt as int"),
        ({"on_start": _set("prompt", ["be brief"])}, r"hook on_start left str at call.prompt\[0\]"),
        ({"on_start": _set("history", "question")}, r"hook on_start left call.history as str"),
        ({"on_start": _set("history", [None])}, r"hook on_start left None at call.history\[0\]"),
        ({"on_response": _set("response", "text")}, r"hook on_response left call.response as str"),
        (
            {"on_response": _edit_content},
            r"hook on_response left call.response.message invalid: (?s:.*)content",
        ),
        ({"on_finish": lambda call: "kept"}, r"hook on_finish returned str"),
    ],
)
async def test_what_a_hook_leaves_is_checked_naming_the_agent_and_hook(
    hooks: dict, expected: str
) -> None:
    """AgentKit's lifecycle hooks return what the call goes on with; here a hook leaving a
    prompt or history that is no list of messages reached the model client unchecked, a
    response that is no `ModelResponse` or an `on_finish` returning text failed with an
    AttributeError, and an answer edited to an int was kept as the output and in output_key."""
    model = ScriptedModel(["hi"])
    agent = Agent("a", system="Be kind.", model=model, hooks=hooks, output_key="reply")
    with pytest.raises(ConfigurationError, match=rf"agent 'a': {expected}"):
        await one_call(agent).run("question")


@pytest.mark.anyio
async def test_an_on_finish_hook_may_fail_the_run_on_a_tool_error() -> None:
    """The Agents SDK's `failure_error_function=None` (docs/coming-from-openai-agents.md): a
    tool's exception is the model's error result, and an `on_finish` hook that finds it may
    fail the run; its exception reaches the caller as it is."""

    @tool
    def charge() -> str:
        """Charge the card."""
        raise KeyError("card")

    def fail_on_tool_error(call) -> None:
        failed = [record for record in call.result.tool_calls if record.is_error]
        if failed:
            raise RuntimeError(f"{failed[0].name} failed")

    agent = Agent(
        "a",
        tools=[charge],
        model=ScriptedModel([call("charge"), "never asked"]),
        hooks={"on_finish": fail_on_tool_error},
    )
    with pytest.raises(RuntimeError, match="charge failed"):
        await one_call(agent).run("x")
    assert agent.model.remaining == 1  # the model never read the error
