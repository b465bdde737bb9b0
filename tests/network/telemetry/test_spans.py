"""Spans of a run with parallel tool calls, a failing tool, a confirmation and its resume."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agents import ScriptedModel, call
from network import Network, Resume, StopReason, ThreadRef
from network.agui.server import app as agui_app
from network.threads import SQLStore
from routers import routing_agent
from tests.network.agui.protocol import parse_sse
from tests.network.telemetry.ops_network import SECRET, build
from tests.network.telemetry.otel import Recorder, tree

pytestmark = pytest.mark.anyio


async def test_parallel_tools_error_confirmation_and_resume(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build(recorder.telemetry)
    first = await network.run("Check the weather, then deploy.", state={"temp:token": SECRET})
    assert first.stop_reason == StopReason.INTERRUPTED

    assert tree(recorder.spans) == [
        (
            "invoke_workflow ops-net",
            [
                (
                    "invoke_agent ops",
                    [
                        ("chat scripted-ops", []),
                        ("execute_tool lookup", []),
                        ("execute_tool lookup", []),
                        ("execute_tool explode", []),
                    ],
                ),
                ("invoke_agent ops", [("chat scripted-ops", [])]),
            ],
        )
    ]
    agent = recorder.named("invoke_agent ops")[0]
    tools = [s for s in recorder.spans if s.name.startswith("execute_tool")]
    # Concurrent calls are siblings under their agent call, in the order the model asked.
    assert {s.parent.span_id for s in tools} == {agent.context.span_id}
    records = first.results[0].tool_calls
    assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == [r.id for r in records]
    explode = recorder.only("execute_tool explode")
    assert explode.attributes["error.type"] == "ValueError"
    assert explode.status.status_code.name == "ERROR"
    assert explode.status.description is None  # the message may hold content: not by default
    assert all("error.type" not in s.attributes for s in recorder.named("execute_tool lookup"))
    assert agent.attributes["agent_network.state.keys_written"] == ("seen",)

    root = recorder.only("invoke_workflow ops-net")
    assert root.attributes["agent_network.stop_reason"] == "interrupted"
    (interrupt_event,) = root.events
    pending = first.interrupts[0]
    assert interrupt_event.name == "agent_network.interrupt"
    assert dict(interrupt_event.attributes) == {
        "agent_network.interrupt.id": pending.id,
        "agent_network.interrupt.reason": "confirmation_required",
        "gen_ai.tool.call.id": pending.tool_call_id,
        "gen_ai.tool.name": "deploy",
        "gen_ai.agent.name": "ops",
    }

    recorder.clear()
    resumed = await network.run(first.resume([pending.accept()]))
    assert resumed.stop_reason == StopReason.ROUTER_FINISHED
    assert resumed.trace_id != first.trace_id
    assert tree(recorder.spans) == [
        (
            "invoke_workflow ops-net",
            [
                ("invoke_agent ops", [("execute_tool deploy", [])]),
                ("invoke_agent ops", [("chat scripted-ops", [])]),
            ],
        )
    ]
    root = recorder.only("invoke_workflow ops-net")
    (link,) = root.links
    assert f"{link.context.trace_id:032x}" == first.trace_id
    assert f"{link.context.span_id:016x}" == first.span_id
    assert root.attributes["agent_network.resumed"] is True
    (resume_event,) = root.events
    assert resume_event.name == "agent_network.resume"
    assert resume_event.attributes["agent_network.interrupt.id"] == pending.id
    assert resume_event.attributes["agent_network.approved"] is True
    assert resume_event.attributes["gen_ai.tool.name"] == "deploy"


async def test_a_rejected_call_is_an_event_not_a_tool_span(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build(recorder.telemetry)
    first = await network.run("Deploy.", state={"temp:token": SECRET})
    recorder.clear()
    await network.run(first.resume([first.interrupts[0].reject("not today")]))
    step = recorder.named("invoke_agent ops")[0]
    assert [e.name for e in step.events] == ["agent_network.tool.rejected"]
    assert not recorder.named("execute_tool deploy")


async def test_a_failed_run_ends_its_spans_with_the_error_type(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build(recorder.telemetry, ScriptedModel([RuntimeError("provider down")]))
    with pytest.raises(RuntimeError) as caught:
        await network.run("Go.", state={"temp:token": SECRET})
    assert tree(recorder.spans) == [
        ("invoke_workflow ops-net", [("invoke_agent ops", [("chat scripted", [])])])
    ]
    for span in recorder.spans:
        assert span.attributes["error.type"] == "RuntimeError"
        assert span.status.status_code.name == "ERROR"
    assert caught.value.partial_result.trace_id == f"{recorder.spans[0].context.trace_id:032x}"


async def test_routing_agent_requests_are_their_own_invoke_agent(quiet_logs: None) -> None:
    recorder = Recorder()
    worker_model = ScriptedModel(["Report written."], name="scripted-worker")
    router_model = ScriptedModel(
        [
            call("select_agent", name="nobody", reason="typo"),
            call("select_agent", name="writer", reason="write it"),
            call("done", summary="finished"),
        ],
        name="scripted-router",
    )
    from agents import Agent

    writer = Agent("writer", description="Writes.", model=worker_model)
    network = Network(
        "routed",
        agents=[writer],
        router=routing_agent(router_model, name="dispatcher"),
        telemetry=recorder.telemetry,
    )
    result = await network.run("Write the report.")
    assert result.stop_reason == StopReason.ROUTER_DONE
    assert tree(recorder.spans) == [
        (
            "invoke_workflow routed",
            [
                (
                    "invoke_agent dispatcher",
                    [("chat scripted-router", []), ("chat scripted-router", [])],
                ),
                ("invoke_agent writer", [("chat scripted-worker", [])]),
                ("invoke_agent dispatcher", [("chat scripted-router", [])]),
            ],
        )
    ]
    routers = recorder.named("invoke_agent dispatcher")
    assert [s.attributes["agent_network.role"] for s in routers] == ["router", "router"]
    assert [s.attributes["agent_network.call_index"] for s in routers] == [0, 1]
    assert recorder.only("invoke_agent writer").attributes["agent_network.role"] == "agent"
    for chat in recorder.named("chat scripted-router"):
        assert chat.attributes["gen_ai.agent.name"] == "dispatcher"


async def test_a_run_inside_an_application_span_is_its_child(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build(recorder.telemetry)
    tracer = recorder.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("POST /runs") as request:
        await network.run("Deploy.", state={"temp:token": SECRET})
    root = recorder.only("invoke_workflow ops-net")
    assert root.parent is not None
    assert root.parent.span_id == request.get_span_context().span_id


async def test_resume_takes_its_own_limits(quiet_logs: None) -> None:
    from network import UsageLimits

    network = build(Recorder().telemetry)
    first = await network.run("Deploy.", state={"temp:token": SECRET})
    resumed = await network.run(
        first.resume([first.interrupts[0].accept()]), limits=UsageLimits(max_model_calls=0)
    )
    assert resumed.stop_reason == StopReason.USAGE_LIMIT
    assert [r.agent for r in resumed.results][-1] == "ops"  # the confirmed call still ran
    assert resumed.limit_exceeded is not None and resumed.limit_exceeded.actual == 0


async def test_a_telemetry_failure_is_logged_and_does_not_fail_the_run() -> None:
    import structlog

    def redact(name: str, value: object) -> object:
        raise KeyError("a bug in the application's redact hook")

    recorder = Recorder(capture_content=True, redact=redact)
    network = build(recorder.telemetry)
    try:
        with structlog.testing.capture_logs() as logs:
            result = await network.run("Deploy.", state={"temp:token": SECRET})
    finally:
        structlog.reset_defaults()  # capture_logs leaves structlog marked as configured
    assert result.stop_reason == StopReason.INTERRUPTED
    failures = [line for line in logs if line["event"] == "telemetry.failed"]
    assert failures and failures[0]["log_level"] == "warning"
    assert "redact hook" in failures[0]["error"]
    assert failures[0]["attribute"] == "gen_ai.system_instructions"  # the first one it saw


async def test_a_failing_redact_hook_drops_its_attribute_and_keeps_every_span() -> None:
    """A hook that raised took the whole agent call's spans with it: only the run's root was
    exported (its agent, chat and tool spans were never written, the agent span never ended).
    Now the attribute the hook failed on is left out (it was to be redacted: never recorded
    as it was), once logged per attribute name, and every span is written."""
    import structlog

    def redact(name: str, value: object) -> object:
        if name == "gen_ai.tool.call.result":
            raise KeyError("a bug in the application's redact hook")
        return value

    recorder = Recorder(capture_content=True, redact=redact)
    network = build(recorder.telemetry)
    try:
        with structlog.testing.capture_logs() as logs:
            await network.run("Deploy.", state={"temp:token": SECRET})
    finally:
        structlog.reset_defaults()  # capture_logs leaves structlog marked as configured
    names = [span.name for span in recorder.spans]
    assert "invoke_agent ops" in names and "chat scripted-ops" in names
    tools = [span for span in recorder.spans if span.name.startswith("execute_tool")]
    assert tools
    for span in tools:
        assert "gen_ai.tool.call.result" not in span.attributes
        assert "gen_ai.tool.call.arguments" in span.attributes  # the hook passed these
    failures = [line for line in logs if line["event"] == "telemetry.failed"]
    assert [line["attribute"] for line in failures] == ["gen_ai.tool.call.result"]


async def test_on_a_thread_every_invoke_agent_span_names_the_conversation(
    tmp_path: Path, quiet_logs: None
) -> None:
    """The routing agent's spans too: they lacked `gen_ai.conversation.id`, which the page
    lists for every `invoke_agent` span of a run on a thread."""
    from agents import Agent

    recorder = Recorder()
    router_model = ScriptedModel(
        [call("select_agent", name="writer", reason="write it"), call("done", summary="ok")],
        name="scripted-router",
    )
    writer = Agent("writer", model=ScriptedModel(["Report written."], name="scripted-worker"))
    network = Network(
        "routed",
        agents=[writer],
        router=routing_agent(router_model, name="dispatcher"),
        telemetry=recorder.telemetry,
    )
    await network.run("Write the report.", thread=ThreadRef("t-7", store=str(tmp_path / "t.db")))

    agents = [s for s in recorder.spans if s.name.startswith("invoke_")]
    assert sorted(s.name for s in agents) == [
        "invoke_agent dispatcher",
        "invoke_agent dispatcher",
        "invoke_agent writer",
        "invoke_workflow routed",
    ]
    for span in agents:
        assert span.attributes["gen_ai.conversation.id"] == "t-7", span.name


async def test_a_models_own_exception_is_a_failed_chat_span(quiet_logs: None) -> None:
    """A model that raised something other than a `ModelError` (a custom `Model`, a
    `ScriptedModel` given an exception "as a failing provider would") made no chat span: the
    page promises one per attempt, failed ones included, with the exception's type."""
    from agents import Agent

    recorder = Recorder()
    agent = Agent("greeter", model=ScriptedModel([ConnectionError("refused")], name="flaky"))
    network = Network("greeting", agents=[agent], telemetry=recorder.telemetry)
    with pytest.raises(ConnectionError):
        await network.run("Hi.")
    assert tree(recorder.spans) == [
        ("invoke_workflow greeting", [("invoke_agent greeter", [("chat flaky", [])])])
    ]
    chat = recorder.only("chat flaky")
    assert chat.kind.name == "CLIENT"
    assert chat.attributes["error.type"] == "ConnectionError"
    assert chat.attributes["gen_ai.agent.name"] == "greeter"
    assert chat.status.status_code.name == "ERROR"
    assert not chat.status.description  # the message may quote content: left out

    recorder = Recorder()
    router = routing_agent(ScriptedModel([RuntimeError("down")], name="route-model"))
    network = Network("routed", agents=[agent], router=router, telemetry=recorder.telemetry)
    with pytest.raises(RuntimeError):
        await network.run("Hi.")
    assert tree(recorder.spans) == [
        ("invoke_workflow routed", [("invoke_agent router", [("chat route-model", [])])])
    ]
    assert recorder.only("chat route-model").attributes["error.type"] == "RuntimeError"
    assert recorder.only("invoke_agent router").status.status_code.name == "ERROR"


async def test_a_run_answered_by_thread_id_links_to_the_interrupted_run(
    tmp_path: Path, quiet_logs: None
) -> None:
    """Another process, holding only the thread id, answers the confirmation: its root had
    `agent_network.resumed` and the resume event but no link to the interrupted run (the
    thread kept no trace ids; only an in-memory `result.resume(...)` linked). The thread's
    entry now keeps the stopped run's root ids, and the answering run links to them."""
    thread = ThreadRef("deploys", store=str(tmp_path / "threads.db"))
    first_recorder = Recorder()
    first = await build(first_recorder.telemetry).run("Check, then deploy.", thread=thread)
    assert first.stop_reason == StopReason.INTERRUPTED

    async with SQLStore(str(tmp_path / "threads.db")) as store:  # a fresh process, as it were
        (waiting,) = (await store.get_thread("deploys")).pending_interrupts
    recorder = Recorder()
    later = build(recorder.telemetry, ScriptedModel(["Deployed."], name="scripted-ops"))
    resumed = await later.run(Resume([waiting.accept()]), thread=thread)

    assert resumed.trace_id is not None and resumed.trace_id != first.trace_id
    root = recorder.only("invoke_workflow ops-net")
    assert root.attributes is not None and root.attributes["agent_network.resumed"] is True
    (link,) = root.links
    assert f"{link.context.trace_id:032x}" == first.trace_id
    assert f"{link.context.span_id:016x}" == first.span_id
    assert [event.name for event in root.events] == ["agent_network.resume"]


@pytest.mark.parametrize("stored", [False, True], ids=["in_memory", "on_a_store"])
async def test_a_run_answered_over_ag_ui_links_to_the_interrupted_run(
    stored: bool, tmp_path: Path, quiet_logs: None
) -> None:
    """The AG-UI server (as A2A and MCP, through `network.serving.admission`) built the
    answering run's context itself and gave it no link to the interrupted run's trace, whose
    id RUN_STARTED had told the client. The registry's record (in memory) or the thread's
    entry (on a store) keeps it now."""
    recorder = Recorder()
    store = str(tmp_path / "threads.db") if stored else None
    served = agui_app(build(recorder.telemetry), store=store)
    asked = {"id": "m1", "role": "user", "content": "Check, then deploy."}
    body = {"threadId": "t", "runId": "r1", "messages": [asked], "state": {}, "tools": []}
    body |= {"context": [], "forwardedProps": {}}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=served), base_url="http://test"
    ) as http:
        first = parse_sse((await http.post("/", json=body)).text)
        (finished,) = [event for event in first if event["type"] == "RUN_FINISHED"]
        (interrupt,) = finished["outcome"]["interrupts"]
        answer = {"interruptId": interrupt["id"], "status": "resolved"}
        answer["payload"] = {"approved": True}
        again = {**body, "runId": "r2", "messages": [], "resume": [answer]}
        second = parse_sse((await http.post("/", json=again)).text)
    assert second[-1]["type"] == "RUN_FINISHED"
    interrupted = first[0]["metadata"]
    answering = second[0]["metadata"]["traceId"]
    roots = recorder.named("invoke_workflow ops-net")
    (root,) = [span for span in roots if f"{span.context.trace_id:032x}" == answering]
    (link,) = root.links
    assert f"{link.context.trace_id:032x}" == interrupted["traceId"]
    assert f"{link.context.span_id:016x}" == interrupted["spanId"]
