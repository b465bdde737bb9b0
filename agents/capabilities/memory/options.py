"""`Memory`: what `Agent(memory=...)` takes: the store, whose memories a run reads, how many
it recalls, and whether the model gets the memory tools.

Whose memories: a run on a thread has an owner (`RunContext.user_id`: the thread's user, the
AG-UI server's principal) and an app (`RunContext.app_name`). The namespace is made from
them: by default `(app_name, "users", user_id)`; a tuple of labels with `{user_id}` /
`{app_name}` placeholders, or a function of the `RunContext` returning a namespace (or None),
says otherwise (labels always hold `{user_id}`; only a function can share a namespace
between users). A run with no owner (no thread, or the anonymous user) has no memory: nothing
is recalled and the tools tell the model so. One user's namespace is never another's, so one
user's memories are never recalled for another.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from network.errors import ConfigurationError
from network.memory import Memories, Namespace
from network.numbers import check_number
from network.run.context import RunContext

__all__ = ["DEFAULT_NAMESPACE", "Memory"]

DEFAULT_NAMESPACE: Namespace = ("{app_name}", "users", "{user_id}")
"""The namespace of a run's memories unless `Memory(namespace=...)` says otherwise."""

_PLACE = re.compile(r"\{(user_id|app_name)\}")
_ANY_PLACE = re.compile(r"\{[^{}]*\}")  # anything written as a placeholder


class Memory:
    """Long-term memory for an agent: `Agent(memory=Memory(Memories("app.db")))`.

    Args:
        store: the `Memories` store (`network.memory`).
        namespace: whose memories a run reads and writes: labels with `{user_id}` and
            `{app_name}` placeholders (default `("{app_name}", "users", "{user_id}")`), one
            of them with `{user_id}`, or `fn(run) -> namespace | None` (which may share one
            namespace between users on purpose). Another placeholder, or labels without
            `{user_id}`, are a `ConfigurationError`: every user would share the memories.
        recall: how many memories are recalled into the instructions at the start of each
            run (searched by the run's input); 0 recalls none.
        min_score: recall only memories at least this similar to the input (cosine, -1 to 1).
        tools: offer the model `save_memory` and `recall_memories`.
        heading: the line above the recalled memories in the instructions.
    """

    def __init__(
        self,
        store: Memories,
        *,
        namespace: Namespace | Callable[[RunContext], Namespace | None] = DEFAULT_NAMESPACE,
        recall: int = 5,
        min_score: float | None = None,
        tools: bool = True,
        heading: str = "What you remember about this user from earlier conversations:",
    ) -> None:
        if not isinstance(store, Memories):
            raise ConfigurationError(f"Memory: store must be a Memories store, got {store!r}")
        if not callable(namespace) and (
            not isinstance(namespace, tuple)
            or not namespace
            or not all(isinstance(label, str) and label for label in namespace)
        ):
            raise ConfigurationError(
                f"Memory: namespace must be a tuple of labels or a function, got {namespace!r}"
            )
        if not callable(namespace):
            _check_placeholders(namespace)
        if isinstance(recall, bool) or not isinstance(recall, int) or not 0 <= recall <= 50:
            raise ConfigurationError(f"Memory: recall must be an int from 0 to 50, got {recall!r}")
        check_number("Memory: min_score", min_score, minimum=-1, maximum=1, optional=True)
        if not isinstance(tools, bool):
            raise ConfigurationError(f"Memory: tools must be True or False, got {tools!r}")
        if not isinstance(heading, str) or not heading.strip():  # else "None" in the prompt
            raise ConfigurationError(f"Memory: heading must be a non-blank string, got {heading!r}")
        self.store = store
        self.namespace = namespace
        self.recall = recall
        self.min_score = min_score
        self.tools = tools
        self.heading = heading

    def namespace_of(self, run: RunContext) -> Namespace | None:
        """The namespace of `run`'s memories, or None when the run has no owner."""
        if callable(self.namespace):
            return self.namespace(run)
        user = run.user_id
        if not user:  # no thread, or the anonymous user: nobody to remember for
            return None
        app = run.app_name or getattr(run.network, "name", "") or "app"
        values = {"user_id": user, "app_name": app}  # one pass: a value is never re-read
        return tuple(_PLACE.sub(lambda found: values[found[1]], label) for label in self.namespace)

    def __repr__(self) -> str:
        return f"Memory({self.store!r}, namespace={self.namespace!r}, recall={self.recall})"


def _check_placeholders(namespace: Namespace) -> None:
    """A namespace of labels names its user: `{user_id}` in one of them, and no placeholder
    but the two. A misspelt one (`{user}`) would be kept as it is written, and a namespace
    without `{user_id}` is the same for every user: either way one user's memories (and what
    the model saved from one user's words) would be recalled into another's instructions."""
    for label in namespace:
        for found in _ANY_PLACE.finditer(label):
            if not _PLACE.fullmatch(found[0]):
                raise ConfigurationError(
                    f"Memory: namespace label {label!r} holds {found[0]!r}; the placeholders "
                    "are {user_id} and {app_name}"
                )
    if not any("{user_id}" in label for label in namespace):
        raise ConfigurationError(
            f"Memory: namespace {namespace!r} has no {{user_id}} label, so every user would "
            "share its memories; add one, or give a function (`namespace=lambda run: ...`) "
            "to share a namespace on purpose"
        )


def coerce_memory(owner: str, memory: Any) -> Memory | None:
    """`Agent(memory=...)`: a `Memory`, a `Memories` store (default options), or None."""
    if memory is None or isinstance(memory, Memory):
        return memory
    if isinstance(memory, Memories):
        return Memory(memory)
    raise ConfigurationError(
        f"agent {owner!r}: memory must be a Memory or a Memories store, got {memory!r}"
    )
