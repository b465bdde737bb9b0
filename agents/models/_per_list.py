"""`PerList`: something derived from a list once, for as long as that list is the one passed.

An agent's tool list lives as long as the agent and is passed with every request, so what a
client derives from it (its JSON text, a copy a library may edit in place) is made once per
list and looked up by the list's identity. The list is kept with the result, so its id
cannot be recycled by another list while the entry lives; past 256 lists the table starts
afresh (a program making new tool lists per call still gets its result, made anew).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_MAX_LISTS = 256


class PerList(Generic[T]):
    """`derive(items)`, made once per list object."""

    __slots__ = ("_derive", "_made")

    def __init__(self, derive: Callable[[list[Any]], T]) -> None:
        self._derive = derive
        self._made: dict[int, tuple[list[Any], T]] = {}  # id(list) -> (the list, what it gave)

    def __call__(self, items: list[Any]) -> T:
        made = self._made.get(id(items))
        if made is None or made[0] is not items:
            if len(self._made) >= _MAX_LISTS:
                self._made.clear()
            made = self._made[id(items)] = (items, self._derive(items))
        return made[1]
