"""A step's outcome is serialized as DBOS's `serialize_value(output, None, serializer)` would
write it, with the choice of function and name made once per execution
(`network.durable.steps.outcome_serializer`): the same text and the same serialization name
for DBOS's default serializer, a serializer named as DBOS's portable JSON, and one of a
user's own, so DBOS reads the rows back as its own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dbos._serialization import DefaultSerializer, Serializer, deserialize_value, serialize_value

from network.durable.steps import outcome_serializer


class Upper(Serializer):
    """A user's serializer: JSON, with a name of its own."""

    def serialize(self, data: Any) -> str:
        return json.dumps(data)

    def deserialize(self, serialized_data: str) -> Any:
        return json.loads(serialized_data)

    def name(self) -> str:
        return "upper_json"


class PortableNamed(Upper):
    """A serializer that calls itself DBOS's portable JSON: DBOS writes with its own."""

    def name(self) -> str:
        return "portable_json"


@pytest.mark.parametrize("serializer", [DefaultSerializer(), Upper(), PortableNamed()])
@pytest.mark.parametrize("value", [True, ("a", [["items", ["x"]]], None), {"k": 1}])
def test_an_outcome_is_written_as_dboss_serialize_value_writes_it(
    serializer: Serializer, value: Any
) -> None:
    serialize, name = outcome_serializer(serializer)
    expected_text, expected_name = serialize_value(value, None, serializer)
    assert (serialize(value), name) == (expected_text, expected_name)
    assert deserialize_value(serialize(value), name, serializer) == deserialize_value(
        expected_text, expected_name, serializer
    )
