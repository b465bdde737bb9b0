"""What a memory store keeps and hands back: `MemoryItem`, and `NewMemory` (one to write).

A memory lives in a **namespace** (a tuple of labels the application chooses: a user
`("shop", "users", "ann")`, an app `("shop",)`) under a **key**. Its **value** is JSON data;
its **text** is what is embedded and searched by meaning (the value itself when it is a
string, else given). **Metadata** is a flat dict of scalars that searches and listings filter
on. An item may expire (`ttl`), and may say where it was taken from (`thread_id`, `user_id`):
deleting that thread or user forgets it (`Memories.forget`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MemoryItem", "Namespace", "NewMemory", "Scalar"]

Namespace = tuple[str, ...]
"""A memory's namespace: one or more labels, outermost first (`("shop", "users", "ann")`)."""

Scalar = str | int | float | bool | None
"""What a metadata value may be."""


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One memory, as a store hands it back.

    Attributes:
        namespace: where it lives.
        key: its key within the namespace.
        value: its JSON value, as written.
        text: what was embedded (the value when it is a string).
        metadata: its metadata (a flat dict of scalars).
        created_at / updated_at: Unix times (seconds) of its first and latest write.
        expires_at: the Unix time it expires at, or None.
        thread_id / user_id: the thread and user it was taken from, if the writer said.
        score: for a search result, the cosine similarity of its text to the query (1 is
            the same meaning); None otherwise.
    """

    namespace: Namespace
    key: str
    value: Any
    text: str
    metadata: Mapping[str, Scalar] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0
    expires_at: float | None = None
    thread_id: str | None = None
    user_id: str | None = None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class NewMemory:
    """One memory to write with `Memories.put_many` (`put` takes the same as arguments).

    Attributes:
        key: its key within the namespace (a new key adds, a known one replaces).
        value: JSON data (a string, number, bool, None, list or dict).
        text: what to embed; default: the value when it is a string, else its JSON text.
        metadata: a flat dict of scalars to filter on.
        ttl: seconds until it expires (None: the store's default, which may be never).
        thread_id / user_id: the thread and user it was taken from (provenance).
    """

    key: str
    value: Any
    text: str | None = None
    metadata: Mapping[str, Scalar] | None = None
    ttl: float | None = None
    thread_id: str | None = None
    user_id: str | None = None
