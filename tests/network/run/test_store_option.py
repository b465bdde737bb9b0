"""`store=` is checked where it is given: a `ThreadRef`'s and a `SharedBudget`'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from network import ConfigurationError
from network.run.store_option import check_store
from network.run.thread_ref import ThreadRef
from network.threads import MemoryStore


@pytest.mark.parametrize(
    ("store", "said"),
    [
        (5, "a int, which has no create_thread method"),
        (object(), "which has no create_thread method"),
        (MemoryStore, "got the class MemoryStore: give an instance"),
        ("", "got ''"),
        ("   ", "got '   '"),
        ("db\x00.sqlite", "got 'db\\x00.sqlite'"),
        ("db\ud800.sqlite", "has a lone surrogate at 2"),
        (b"threads.db", "which has no create_thread method"),
    ],
)
def test_a_thread_ref_refuses_what_is_not_a_store_when_it_is_made(store: Any, said: str) -> None:
    with pytest.raises(ConfigurationError, match="ThreadRef.store must be a thread store") as err:
        ThreadRef("t-1", store=store)
    assert said in str(err.value)


@pytest.mark.parametrize(
    "store",
    [None, "threads.db", Path("threads.db"), "sqlite:///x.db", "postgresql://u:p@h/db"],
)
def test_urls_paths_and_none_are_taken_as_they_are(store: Any) -> None:
    assert ThreadRef("t-1", store=store).store is store
    assert check_store("store", store) is store


def test_a_store_object_is_taken() -> None:
    store = MemoryStore()
    assert ThreadRef("t-1", store=store).store is store
