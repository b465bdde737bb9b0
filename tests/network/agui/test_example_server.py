"""examples/agui_server.py serves the codegen example network over AG-UI."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.network.agui.protocol import parse_sse, replay

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "agui_server.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("agui_server_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.usefixtures("quiet_logs")
async def test_the_example_serves_the_codegen_network() -> None:
    asgi = load_example().create_app()
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=30) as client:
        response = await client.post(
            "/",
            json={
                "threadId": "example",
                "runId": "run-1",
                "messages": [{"id": "1", "role": "user", "content": "Write add(a, b)."}],
            },
        )
    assert response.status_code == 200
    run = replay(parse_sse(response.text), thread_id="example", run_id="run-1")
    assert "tests/test_add.py" in run.state["files"]
    assert run.state["review"]["approved"] is True
    assert run.state == asgi.state.threads.peek("example").state
