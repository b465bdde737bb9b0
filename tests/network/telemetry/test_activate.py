"""Whether a run is traced: its trace ids in RunResult and RUN_STARTED when it is; nothing, not
even an import of OpenTelemetry, when it is not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from examples.codegen import TASK, build_network
from tests.network.telemetry.otel import Recorder

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[3]


async def test_the_trace_id_is_in_run_started_and_the_result(quiet_logs: None) -> None:
    recorder = Recorder()
    network = build_network()
    network.telemetry = recorder.telemetry
    async with network.stream(TASK) as events:
        seen = [event async for event in events]
    started = seen[0]
    assert started.type == "RUN_STARTED"
    result = events.result
    assert result.trace_id is not None and len(result.trace_id) == 32
    assert started.metadata == {"traceId": result.trace_id, "spanId": result.span_id}
    encoded = started.model_dump(by_alias=True, exclude_none=True)
    assert encoded["metadata"]["traceId"] == result.trace_id
    root = recorder.only("invoke_workflow codegen")
    assert f"{root.context.trace_id:032x}" == result.trace_id


async def test_without_an_sdk_nothing_is_traced(quiet_logs: None) -> None:
    result = await build_network().run(TASK)  # no providers given, none installed globally
    assert result.trace_id is None
    async with build_network().stream(TASK) as events:
        seen = [event async for event in events]
    assert seen[0].type == "RUN_STARTED"
    assert seen[0].metadata is None


QUIET = "import logging, structlog\n" + (
    "structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))\n"
)


def _python(code: str) -> str:
    """Run `code` in a fresh interpreter (global providers and imports start empty)."""
    done = subprocess.run(
        [sys.executable, "-c", QUIET + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_network_and_a_plain_run_never_import_opentelemetry() -> None:
    out = _python(
        """
        import sys
        import network, agents, routers
        from examples.codegen import TASK, build_network
        result = build_network().run_sync(TASK)
        print(result.trace_id, sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    assert out == "None []"


def test_the_api_alone_records_nothing_and_a_global_sdk_provider_is_used() -> None:
    out = _python(
        """
        import opentelemetry.trace as trace
        from examples.codegen import TASK, build_network
        print(build_network().run_sync(TASK).trace_id)  # the API without an SDK: nothing
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        result = build_network().run_sync(TASK)
        roots = [s for s in exporter.get_finished_spans() if s.parent is None]
        print(len(roots), f"{roots[0].context.trace_id:032x}" == result.trace_id)
        """
    )
    assert out.splitlines() == ["None", "1 True"]


async def test_the_agui_server_sends_the_trace_id_in_run_started(quiet_logs: None) -> None:
    import httpx

    from network.agui import app
    from tests.network.agui.protocol import parse_sse

    recorder = Recorder()
    network = build_network()
    network.telemetry = recorder.telemetry
    transport = httpx.ASGITransport(app=app(network))
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30) as http:
        response = await http.post(
            "/",
            json={
                "threadId": "thread-1",
                "runId": "run-1",
                "messages": [{"id": "u1", "role": "user", "content": TASK}],
            },
        )
    events = parse_sse(response.text)
    assert events[0]["type"] == "RUN_STARTED"
    root = recorder.only("invoke_workflow codegen")
    assert events[0]["metadata"] == {
        "traceId": f"{root.context.trace_id:032x}",
        "spanId": f"{root.context.span_id:016x}",
    }
    assert root.attributes["agent_network.run_id"] == "run-1"


@pytest.mark.parametrize("where", ["span processor", "tracer provider"])
async def test_a_failing_provider_leaves_the_run_untraced_not_failed(where: str) -> None:
    """An application's span processor whose `on_start` raises (a buggy enricher), or a
    provider whose `get_tracer` does: the error reached `network.run` as the root span
    started, and the run failed before its first request. It now runs untraced, the failure
    logged as `telemetry.failed`."""
    import structlog
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

    from network.telemetry import Telemetry

    class Enricher(SpanProcessor):
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            raise RuntimeError("a bug in the application's span processor")

    class Broken(TracerProvider):
        def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a bug in the application's tracer provider")

    provider = Broken() if where == "tracer provider" else TracerProvider()
    provider.add_span_processor(Enricher())
    network = build_network()
    network.telemetry = Telemetry(tracer_provider=provider)
    try:
        with structlog.testing.capture_logs() as logs:
            result = await network.run(TASK)
    finally:
        structlog.reset_defaults()  # capture_logs leaves structlog marked as configured
    assert result.stop_reason == "router_finished"
    assert result.trace_id is None and result.span_id is None
    (failure,) = [line for line in logs if line["event"] == "telemetry.failed"]
    assert "a bug in the application's" in failure["error"]


def test_the_tracer_cache_keeps_no_provider_alive_and_stays_bounded() -> None:
    """Each provider's tracer is made once and kept while the provider lives: providers an
    application drops are freed (a dict keyed by `id(provider)` kept every one alive, and
    grew with each), and one that cannot be weakly referenced is kept among the few most
    recent, found by identity, never by an id another provider reused."""
    import gc
    import weakref

    from opentelemetry.sdk.trace import TracerProvider

    from network.telemetry.activate import PerProvider, _tracer, _tracers

    before = len(_tracers)
    # (shutdown_on_exit=False: the SDK's atexit hook would keep each alive by itself)
    providers = [TracerProvider(shutdown_on_exit=False) for _ in range(30)]
    tracers = [_tracer(provider) for provider in providers]
    assert _tracer(providers[0]) is tracers[0]  # made once per provider
    assert len(_tracers) == before + 30
    first = weakref.ref(providers[0])
    del providers, tracers
    gc.collect()
    assert first() is None  # the dropped provider is freed, with its tracer
    assert len(_tracers) == before

    class Slotted:  # no weak reference to it
        __slots__ = ("name",)

        def __init__(self, name: str) -> None:
            self.name = name

    made = PerProvider(lambda provider: f"tracer of {provider.name}", bound=4)
    for number in range(20):
        provider = Slotted(f"p{number}")
        assert made.get(provider) == f"tracer of p{number}"  # never another one's (reused id)
        assert made.get(provider) == f"tracer of p{number}"
    assert len(made) == 4
