"""Stored threads as cases, on every store: the case a run makes passes on the same network
and fails on one that behaves otherwise; a store's threads as a dataset."""

from __future__ import annotations

from typing import Any

import pytest

from network import ThreadRef
from network.evals import (
    Dataset,
    DatasetError,
    case_from_thread,
    dataset_from_threads,
    evaluate,
)
from network.threads.protocol import ThreadNotFoundError
from tests.network.capabilities.replay.teams import TASK, codegen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("quiet_logs")]


async def test_a_stored_run_becomes_a_case_its_network_passes(store: Any) -> None:
    ref = ThreadRef("t1", store=store)
    await codegen().run(TASK, thread=ref, state={"files": {"README": "hi"}})
    await codegen().run("Again.", thread=ref)  # a later run is not part of the case
    case = await case_from_thread(codegen(), ref)
    assert (case.name, case.input, case.state) == ("t1", TASK, {"files": {"README": "hi"}})
    assert case.expected_output == "Approved."
    assert [(t.name, sorted(t.arguments or {})) for t in case.expected_tools or []] == [
        ("save", ["files"]),
        ("review", ["approved"]),
    ]
    assert case.expected_state is not None
    assert case.expected_state["plan"] == "1. add.py\n2. test_add.py"
    assert sorted(case.expected_state["files"]) == ["README", "add.py", "test_add.py"]
    assert case.metadata["thread"] == "t1" and case.metadata["run"]
    dataset = Dataset(name="d", cases=[case])
    assert (await evaluate(codegen(), dataset)).all_passed
    changed = await evaluate(codegen(saved="wrote", reviewer_first=True), dataset)
    assert not changed.all_passed


async def test_a_stores_threads_become_a_dataset(store: Any) -> None:
    for thread in ("a", "b"):
        await codegen().run(TASK, thread=ThreadRef(thread, store=store))
    dataset = await dataset_from_threads(codegen(), store, name="regressions")
    assert dataset.name == "regressions" and sorted(c.name for c in dataset.cases) == ["a", "b"]
    only = await dataset_from_threads(codegen(), store, thread_ids=["b"])
    assert [c.name for c in only.cases] == ["b"] and only.name == "codegen"
    with pytest.raises(ThreadNotFoundError, match="'zz'"):
        await dataset_from_threads(codegen(), store, thread_ids=["zz"])
    # no thread of the user: said, not a dataset of no case (whose evaluation passed)
    with pytest.raises(DatasetError, match="no stored thread of app 'codegen' of user 'zz'"):
        await dataset_from_threads(codegen(), store, user_id="zz")
