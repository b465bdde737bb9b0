"""The user's message a run is given is refused before anything runs when no thread store
could keep it: a lone surrogate (no UTF-8 form; JSON may spell one) or a NUL character."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel
from network import Network, ThreadRef
from network.errors import MessageError
from network.threads import SQLStore

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("text", "said"),
    [("hi \ud800", "a lone surrogate (at 3)"), ("hi\x00", "a NUL character (at 2)")],
    ids=["lone surrogate", "NUL"],
)
async def test_an_input_no_store_can_keep_is_refused_before_the_model_is_asked(
    tmp_path: Path, text: str, said: str
) -> None:
    # the surrogate was sent to the model (paid), then the commit failed with a
    # PydanticSerializationError; NUL failed the commit on PostgreSQL
    model = ScriptedModel(lambda request: "ok")
    network = Network("n", agents=[Agent("a", model=model)])
    store = f"sqlite:///{tmp_path}/threads.db"
    with pytest.raises(MessageError, match=re.escape(said)) as refused:
        await network.run(text, thread=ThreadRef("t", store=store))
    assert refused.value.field == "input"
    with pytest.raises(MessageError, match=re.escape(said)):
        [event async for event in network.stream(text)]
    assert model.requests == []
    async with SQLStore(store) as threads:
        assert await threads.get_thread("t") is None
    assert (await network.run("hé 😀", thread=ThreadRef("t", store=store))).output == "ok"
