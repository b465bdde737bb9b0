"""`State`: equality that never raises, whatever the schema's handlers."""

from __future__ import annotations

from typing import Any

import pytest

from network import State, StateError, StateValidationError


def test_states_with_a_lambda_handler_compare_instead_of_raising() -> None:
    def keep_longest(old: Any, new: Any) -> Any:
        return new if old is None or len(new) > len(old) else old

    longest = lambda old, new: max(old or "", new, key=len)  # noqa: E731 (the point)
    schema = {"name": {"type": str, "handler": longest}}
    first, second = State({"name": "ab"}, schema=schema), State({"name": "ab"}, schema=schema)
    assert first == second
    other = State({"name": "ab"}, schema={"name": {"type": str, "handler": keep_longest}})
    assert first != other
    assert first != State({"name": "ab"}, schema={"name": {"type": int | str, "handler": longest}})


def test_initial_values_are_validated_not_merged_unlike_haystack() -> None:
    # docs/coming-from-haystack.md: Haystack passes initial data through `set` (a scalar for a
    # list key becomes a one-item list); here initial data is the keys' values, validated.
    schema = {"documents": {"type": list[str]}}
    with pytest.raises(StateValidationError) as caught:
        State({"documents": "doc"}, schema=schema)
    assert caught.value.key == "documents"
    assert State({"documents": ["doc"]}, schema=schema).kv.get("documents") == ["doc"]


@pytest.mark.parametrize("data", [5, "abc", [("a", 1)], [], 0, object()])
def test_initial_data_that_is_no_mapping_is_refused_as_a_state_error(data: Any) -> None:
    # it was the dict update's TypeError or ValueError (`network.run(state=5)`), or, for a
    # list of pairs or a falsy value, data taken silently
    with pytest.raises(StateError, match="initial state must be a mapping"):
        State(data)


def test_a_run_given_initial_data_that_is_no_mapping_fails_before_it_starts() -> None:
    from agents import Agent, ScriptedModel
    from network import Network

    model = ScriptedModel(["hi"])
    network = Network("n", agents=[Agent("a", model=model)])
    with pytest.raises(StateError, match="initial state must be a mapping"):
        network.run_sync("go", state=5)  # type: ignore[arg-type]
    assert model.requests == []


@pytest.mark.parametrize("results", [[5], [{"agent": "a"}], "abc", {"agent": "a"}, 3])
def test_results_that_are_no_inference_results_are_refused_when_the_state_is_made(
    results: Any,
) -> None:
    """AgentKit's createState(data, {results}) (docs/coming-from-agentkit.md): `results=[5]`
    was taken, a run went on with it and `to_json` failed with an AttributeError; text was
    read letter by letter."""
    with pytest.raises(StateError, match=r"State\(results=\.\.\.\)"):
        State({}, results=results)


@pytest.mark.parametrize(
    ("messages", "index", "field"),
    [
        ("hello", None, "messages"),
        ([{"role": "user", "content": "hi"}, 5], 1, "message"),
        ([{"role": "user", "content": 5}], 0, "content"),
    ],
)
def test_messages_that_are_no_messages_are_a_message_error_naming_where(
    messages: Any, index: int | None, field: str
) -> None:
    """They were pydantic's own ValidationError (text: one message per letter, each refused)."""
    from network import MessageError

    with pytest.raises(MessageError) as caught:
        State({}, messages=messages)
    assert (caught.value.index, caught.value.field) == (index, field)
    assert State({}, messages=[{"role": "user", "content": "hi"}]).messages[0].content == "hi"


def test_a_schema_given_as_the_data_says_where_the_schema_goes() -> None:
    """Haystack writes `State(schema, data)` (docs/coming-from-haystack.md); here the first
    argument is the data, and a schema given there was an UnstorableValueError about a type."""
    from network import merge_lists

    with pytest.raises(StateError, match=r"write State\(data, schema=schema\)"):
        State({"documents": {"type": list[str], "handler": merge_lists}})
    assert State({"kind": {"type": "invoice"}}).kv.get("kind") == {"type": "invoice"}  # data
