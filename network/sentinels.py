"""`Sentinel`: a marker value of a class of its own, told apart by identity.

A sentinel stands where no ordinary value may (any string is a value a user or a model may
write), so it is the one instance of its class and compared with `is`. It shows and pickles
by `name`, the module global that holds it: a pickled record (a durable step's output, a
saved graph) reads back as that very object, so identity still tells it apart.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["DELETED", "Sentinel"]


class Sentinel:
    """Base class of a sentinel: a subclass sets `name` to the module global holding its
    one instance (`END: Any = _End()` with `name = "END"`)."""

    __slots__ = ()

    name: ClassVar[str] = ""
    """The module global that holds the instance: its repr, and what it pickles as."""

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name


class _Deleted(Sentinel):
    """The class of `DELETED`."""

    __slots__ = ()
    name = "DELETED"


DELETED: Any = _Deleted()
"""A removed key, wherever a removal is recorded beside the values written: a parallel
branch's writes (`network.state.branch`), a durable step's record of its writes
(`network.durable.state_writes`), a `user:` / `app:` write for the thread store
(`network.threads.thread_data.SharedWrite`). Not a string: any string is a value a tool may
write (model output included), which would be taken for a removal. A record pickled with it
(DBOS pickles step outputs) reads back holding this very object."""
