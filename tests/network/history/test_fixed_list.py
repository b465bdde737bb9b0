"""`FixedList`: a list records share, which refuses every change; its copies are plain lists."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from network.history.fixed_list import NO_PROMPT, FixedList

CHANGES: list[Callable[[list[Any]], Any]] = [
    lambda items: items.append(3),
    lambda items: items.extend([3]),
    lambda items: items.insert(0, 3),
    lambda items: items.remove(1),
    lambda items: items.pop(),
    lambda items: items.clear(),
    lambda items: items.sort(),
    lambda items: items.reverse(),
    lambda items: items.__setitem__(0, 3),
    lambda items: items.__delitem__(0),
    lambda items: items.__iadd__([3]),
    lambda items: items.__imul__(2),
]


@pytest.mark.parametrize("change", CHANGES)
def test_every_change_is_refused_and_the_list_stays_as_it_was(
    change: Callable[[list[Any]], Any],
) -> None:
    shared = FixedList([1, 2])
    with pytest.raises(TypeError, match="shared by several records"):
        change(shared)
    assert shared == [1, 2]


def test_it_reads_compares_and_serializes_as_the_list_it_is() -> None:
    shared = FixedList([1, 2])
    assert shared == [1, 2] and shared[0] == 1 and len(shared) == 2 and list(shared) == [1, 2]
    assert json.dumps(shared) == "[1, 2]"
    assert NO_PROMPT == [] and isinstance(NO_PROMPT, FixedList)


def test_copies_are_plain_lists_free_to_change() -> None:
    shared = FixedList([1, [2]])
    for made in (copy.copy(shared), copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert type(made) is list and made == [1, [2]]
        made.append(3)
    assert shared == [1, [2]]
