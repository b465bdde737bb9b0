"""The user's message a run is given is refused before anything runs when no thread store
could keep it: a lone surrogate (no UTF-8 form; JSON may spell one) or a NUL character."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents import Agent, ScriptedModel
from network import Network, ThreadRef
from network.errors import InvalidIdError, MessageError
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


@pytest.mark.parametrize(
    ("run_id", "said"),
    [
        (5, "run_id must be a string, got int"),
        ("", "run_id must not be empty"),
        ("r\x00", "run_id holds a control character (U+0000)"),
        ("r" * 257, "run_id is 257 characters long"),
    ],
)
async def test_a_run_id_no_store_can_keep_is_refused_on_a_thread_or_not(
    run_id: object, said: str
) -> None:
    """Checked only when the run was on a thread: without one, `run_id=5` ran the model and
    then failed streaming with pydantic's error of RUN_STARTED, and `""` was replaced."""
    model = ScriptedModel(lambda request: "ok")
    network = Network("n", agents=[Agent("a", model=model)])
    with pytest.raises(InvalidIdError, match=re.escape(said)) as refused:
        await network.run("hi", run_id=run_id)  # type: ignore[arg-type]
    assert refused.value.field == "run_id"
    with pytest.raises(InvalidIdError, match=re.escape(said)):
        [event async for event in network.stream("hi", run_id=run_id)]  # type: ignore[arg-type]
    assert model.requests == []
    assert (await network.run("hi", run_id="run-7")).run_id == "run-7"
