"""`State`: equality that never raises, whatever the schema's handlers."""

from __future__ import annotations

from typing import Any

import pytest

from network import State, StateValidationError


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


@pytest.mark.anyio
@pytest.mark.parametrize("data", [[("k", 1)], "k=1", 0, ""], ids=repr)
async def test_initial_data_that_is_not_a_mapping_is_refused_naming_it(data: Any) -> None:
    """`network.run(task, state=[...])` was a bare TypeError from `dict.update` (and a falsy
    `0` or `""` passed as no data)."""
    from agents import Agent, ScriptedModel
    from network import ConfigurationError, Network

    with pytest.raises(ConfigurationError, match=r"state must be a mapping .*got (list|str|int)"):
        State(data)
    agent = Agent("a", model=ScriptedModel(["hi"]))
    with pytest.raises(ConfigurationError, match=r"state must be a mapping"):
        await Network("n", agents=[agent]).run("go", state=data)
