"""A lone surrogate a server sends (JSON may spell `"\\ud800"` alone) becomes U+FFFD on both
clients, streamed or not: in the text, a tool call's name and arguments, and the raw answer.

Taken as it came it had no UTF-8 form, and the run failed later, far from the answer: the next
request's body could not be encoded (a `ModelError` the model never saw), the thread's commit
could not serialize it, nor could an AG-UI event."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, tool
from network import Network, ThreadRef
from network.events import RunFinishedEvent
from network.threads import SQLStore
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall, Reply

pytest_plugins = ["tests.fakes.openai_server"]

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]

LONE = "\ud800"
seen: list[str] = []


@tool
def look(topic: str) -> str:
    """Look a topic up."""
    seen.append(topic)
    return f"found {topic}"


def team(model: Any) -> Network:
    agent = Agent("a", model=model, tools=[look])
    return Network(
        "n",
        agents=[agent],
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


def answers(server: FakeOpenAIServer) -> None:
    server.add(
        Reply(
            tool_calls=[
                # a surrogate escaped inside the arguments' own JSON text
                FakeToolCall("look", '{"topic": "a\\ud800b"}', id=f"call{LONE}1"),
                FakeToolCall(f"lo{LONE}ok", "{}"),  # no such tool: the model reads that
            ]
        ),
        Reply(text=f"done {LONE} here", reasoning=f"thought {LONE}"),
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_lone_surrogate_from_the_server_becomes_a_replacement_character(
    openai_server: FakeOpenAIServer,
    client: Callable[..., Any],
    stream: bool,
    tmp_path: Path,
) -> None:
    seen.clear()
    answers(openai_server)
    network = team(client(openai_server.base_url, max_retries=0))
    thread = ThreadRef("t", store=f"sqlite:///{tmp_path}/threads.db")
    if stream:
        events = [event async for event in network.stream("go", thread=thread)]
        assert isinstance(events[-1], RunFinishedEvent)
        for event in events:  # what an AG-UI server sends: each one has a JSON form
            event.model_dump_json().encode()
    else:
        result = await network.run("go", thread=thread)
        assert result.output == "done \ufffd here"
    assert seen == ["a\ufffdb"]
    # the second request was sent (its body has a UTF-8 form), and the thread was committed
    assert len(openai_server.requests) == 2
    async with SQLStore(f"sqlite:///{tmp_path}/threads.db") as store:
        loaded = await store.get_thread("t")
    assert loaded is not None
    assert loaded.results[-1].output[0].content == "done \ufffd here"
    calls = loaded.results[0].tool_calls
    assert [call.name for call in calls] == ["look", "lo\ufffdok"]
    assert calls[0].id != f"call{LONE}1" and LONE not in calls[0].id
