"""Instruction templates: `{key}` and `{key?}` filled from state, escapes, JSON kept as written."""

from typing import ClassVar

import pytest

from agents import Agent, ScriptedModel
from agents._template import Template
from network import Network, State, TemplateError


def one_call(agent: Agent, **kwargs) -> Network:
    return Network(
        "n", agents=[agent], router=lambda ctx: agent if ctx.call_count == 0 else None, **kwargs
    )


def system_text(model: ScriptedModel, index: int = 0) -> str:
    return model.requests[index].system[0].content


@pytest.mark.anyio
async def test_instructions_are_filled_from_state_with_escapes_and_optional_keys() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(
        "a",
        system='Hi {user:name}. Plan: {plan}. Notes: {notes?}. JSON: {{"k": 1}} and {"raw": 2}',
        model=model,
    )
    await one_call(agent).run("x", state={"user:name": "Ada", "plan": "ship it"})
    assert system_text(model) == 'Hi Ada. Plan: ship it. Notes: . JSON: {"k": 1} and {"raw": 2}'


@pytest.mark.anyio
async def test_a_missing_placeholder_names_the_key_and_the_agent() -> None:
    agent = Agent("planner", system="Plan: {plan}", model=ScriptedModel(["ok"]))
    with pytest.raises(TemplateError) as caught:
        await one_call(agent).run("x")
    assert caught.value.key == "plan"
    assert caught.value.agent == "planner"
    assert "'plan'" in str(caught.value) and "'planner'" in str(caught.value)


@pytest.mark.anyio
@pytest.mark.usefixtures("quiet_logs")
@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"b": {"c": 1}}}',
        'Answer as {"files": {"path": "text"}} and nothing else.',
        '[{"a": {}}, {"b": {"c": {"d": []}}}]',
    ],
)
def test_nested_json_in_instructions_reaches_the_model_as_written(text: str) -> None:
    rendered = Template(text).render(State().kv)
    assert rendered == text


@pytest.mark.anyio
@pytest.mark.usefixtures("quiet_logs")
def test_escaped_braces_still_give_literal_braces() -> None:
    kv = State({"plan": "P"}).kv
    assert Template("{{plan}} is {plan}").render(kv) == "{plan} is P"
    assert Template('{{"a": {{"b": 1}}}}').render(kv) == '{"a": {"b": 1}}'
    assert Template('Example: {"plan": {plan}}').render(kv) == 'Example: {"plan": P}'


def test_spaces_inside_the_braces_are_dropped_and_none_renders_empty_as_in_adk() -> None:
    from agents._template import Template

    class Store:
        values: ClassVar[dict[str, object]] = {"customer_id": 42, "nickname": None}

        def has(self, key: str) -> bool:
            return key in self.values

        def get(self, key: str) -> object:
            return self.values[key]

    text = Template("id={ customer_id } nick=[{nickname}] opt=[{ missing? }]").render(Store())
    assert text == "id=42 nick=[] opt=[]"


@pytest.mark.parametrize("name", ["invalid-key", "invalid:key", "user.profile.name", "a b"])
def test_a_name_that_is_not_an_identifier_is_left_as_written_as_in_adk(name: str) -> None:
    # ADK fills only `identifier` or `user:` / `app:` / `temp:` + identifier; it leaves any
    # other braces as written, even when state holds such a key.
    kv = State({name: "filled"} if " " not in name else {}).kv
    assert Template(f"Hello {{{name}}}!").render(kv) == f"Hello {{{name}}}!"
    assert Template(f"Hello {{{name}?}}!").render(kv) == f"Hello {{{name}?}}!"


def test_identifiers_outside_ascii_are_key_names_as_in_adk() -> None:
    kv = State({"ñame": "Iñigo", "app:größe": 3}).kv
    assert Template("{ñame} {app:größe}").render(kv) == "Iñigo 3"


def test_an_adk_artifact_placeholder_is_refused_when_the_agent_is_defined() -> None:
    with pytest.raises(TemplateError) as caught:
        Agent("reader", system="The file says: {artifact.notes.txt}", model=ScriptedModel([]))
    assert caught.value.key == "artifact.notes.txt"
    assert caught.value.agent == "reader"
    assert "artifact" in str(caught.value) and "'reader'" in str(caught.value)
    with pytest.raises(TemplateError):
        Agent("reader", system="{artifact.notes?}", model=ScriptedModel([]))
    # escaped, it is text
    escaped = Agent("reader", system="Write {{artifact.x}}", model=ScriptedModel([]))
    assert escaped.system == "Write {{artifact.x}}"


def test_a_space_before_the_question_mark_leaves_the_braces_as_written_as_in_adk() -> None:
    # ADK reads `{a ?}` as the name "a " (not an identifier): text, not a placeholder.
    kv = State({"a": "A"}).kv
    assert Template("{a ?} { a? } {a?}").render(kv) == "{a ?} A A"


def test_a_placeholder_never_spans_lines_so_code_in_a_prompt_is_text() -> None:
    # ADK strips every whitespace, so `{\n return\n}` there is a missing key `return`; here
    # only spaces and tabs are dropped, and a code block reaches the model as written.
    code = "fn f() {\n    return\n}"
    assert Template(code).render(State().kv) == code
    assert Template("{\tplan }").render(State({"plan": "P"}).kv) == "P"


def test_doubled_braces_are_an_escape_where_adk_fills_the_key() -> None:
    # ADK has no escape: it strips every brace around a name, so `{{plan}}`, `{{plan}` and
    # `{plan}}` all give the value there. Here `{{` / `}}` are literal braces.
    kv = State({"plan": "P"}).kv
    assert Template("{{plan}}").render(kv) == "{plan}"
    assert Template("{{plan}").render(kv) == "{plan}"
    assert Template("{plan}}").render(kv) == "P}"
    assert Template("a {{ b").render(kv) == "a { b"


@pytest.mark.anyio
async def test_the_text_of_a_system_function_is_used_as_written() -> None:
    # As ADK's InstructionProvider: braces in a function's text are never placeholders.
    model = ScriptedModel(["ok"])
    agent = Agent("a", system=lambda ctx: 'Plan {plan}, {{x}}, {"k": 1}', model=model)
    await one_call(agent).run("x", state={"plan": "P"})
    assert system_text(model) == 'Plan {plan}, {{x}}, {"k": 1}'


def test_a_typed_keys_value_renders_in_its_json_form() -> None:
    """`{tags}` of a `set[int]` key rendered `"{1, 2}"` (Python's repr in JSON quotes), bytes
    `"b'\\\\xff'"`, a date `"2024-01-02"` in quotes; ADK's `str()` gives a date unquoted."""
    import datetime

    from pydantic import BaseModel

    class Ticket(BaseModel):
        id: int

    schema = {
        "tags": {"type": set[int]},
        "blob": {"type": bytes},
        "due": {"type": datetime.date},
        "ticket": {"type": Ticket},
    }
    state = State(
        {"tags": [2], "blob": b"\xff", "due": "2024-01-02", "ticket": {"id": 7}}, schema=schema
    )
    rendered = Template("{tags} {blob} {due} {ticket}").render(state.kv)
    assert rendered == '[2] _w== 2024-01-02 {"id": 7}'
