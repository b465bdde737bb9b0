"""`RunResult`: how a finished run shows itself (repr, rich, HTML)."""

from __future__ import annotations

import pytest
from rich.console import Console

from agents import Agent, ScriptedModel, call
from network import Network
from tests.fakes.agents import solo

pytestmark = pytest.mark.usefixtures("quiet_logs")


def test_a_finished_result_shows_itself_in_repr_rich_and_html() -> None:
    network = Network("n", agents=[solo(call("lookup", query="<b>x</b>"), "Answer <i>")])
    network.router = lambda ctx: network.agents["solo"] if ctx.call_count < 2 else None
    result = network.run_sync("go", state={"topic": "<script>alert(1)</script>"})
    text = repr(result)
    assert text.startswith("RunResult(stop_reason='router_finished', calls=2, output='Answer <i>'")
    assert "keys=['topic']" in text
    console = Console(record=True, width=120, color_system=None)
    console.print(result)
    shown = console.export_text()
    assert "stop reason" in shown and "router_finished" in shown
    assert "solo -> solo" in shown and "Answer <i>" in shown and "state topic" in shown
    assert "2 requests, " in shown  # result.spent: one request per agent call here
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "Answer &lt;i&gt;" in page and "router_finished" in page


@pytest.mark.anyio
async def test_this_run_holds_only_this_runs_calls_on_a_thread() -> None:
    from network import ThreadRef
    from network.threads import MemoryStore

    store = MemoryStore()
    agent = Agent("a", model=ScriptedModel(["first", "second"]))
    network = Network("n", agents=[agent])
    first = await network.run("one", thread=ThreadRef("t", store=store))
    second = await network.run("two", thread=ThreadRef("t", store=store))
    assert [r.text for r in first.this_run] == ["first"]
    assert [r.text for r in second.results] == ["first", "second"]  # the thread's calls
    assert [r.text for r in second.this_run] == ["second"]


@pytest.mark.anyio
async def test_output_value_is_a_typed_answer_as_its_object() -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        city: str

    typed = Agent("typed", output_type=Answer, model=ScriptedModel(['{"city": "Oslo"}']))
    result = await typed.run("where?")
    assert result.output == '{"city": "Oslo"}'  # the text, as the model gave it
    assert result.output_value == Answer(city="Oslo")
    plain = await Agent("plain", model=ScriptedModel(["Oslo"])).run("where?")
    assert plain.output_value == "Oslo"


def test_a_value_shows_as_itself_its_json_or_its_repr() -> None:
    from network.run.result_view import as_text

    circular: list[object] = []
    circular.append(circular)
    assert as_text("déjà vu") == "déjà vu"
    assert as_text({"city": "Zürich", "at": object}) == f'{{"city": "Zürich", "at": "{object}"}}'
    assert as_text(circular) == "[[...]]"  # JSON cannot hold it: its repr


def test_a_result_iterates_as_a_dict_of_its_state_keys() -> None:
    # README: the result "reads like a dict of state keys"; `list(result)` and `for key in
    # result` raised KeyError: 0 (Python's fallback iteration by index)
    agent = Agent("a", model=ScriptedModel(["hi"]), output_key="answer")
    result = Network("n", agents=[agent]).run_sync("x", state={"topic": "owls"})
    assert list(result) == result.keys() == ["topic", "answer", "messages", "last_message"]
    assert {key: result[key] for key in result}["answer"] == "hi"
    assert dict(result)["topic"] == "owls"
