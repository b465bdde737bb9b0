"""`FixedList`: a list that refuses changes, so that records can share one.

An agent whose instructions do not change between calls sends the same system messages on
every call, and each call's `InferenceResult.prompt` records them. Sharing one list (and its
`SystemMessage`) among those results, instead of a new list and message per call, leaves two
objects fewer per step for the garbage collector to rescan while many runs wait on their
models, and lets a model client reuse the message's cached wire form. A shared list must not
change under the results that hold it, hence this class: it reads, compares and serializes as
the plain list it is, and any change raises `TypeError`. Copies (`copy.copy`, `deepcopy`,
pickling) are plain lists, free to change.
"""

from __future__ import annotations

from typing import Any, NoReturn


class FixedList(list[Any]):
    """A list whose items never change (see the module docstring)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "this list is shared by several records and cannot change; change a copy "
            "(list(...)) instead"
        )

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (list, (list(self),))


NO_PROMPT: FixedList = FixedList()
"""The prompt of a call sent without system messages."""
