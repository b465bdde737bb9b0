"""Stored threads as cases: what a run did becomes what the next one is expected to do.

    case = await case_from_thread(network, ThreadRef("t1", store="threads.db"))
    dataset = await dataset_from_threads(network, "threads.db", name="regressions")
    dataset.save("evals/regressions.yaml")

A case is a thread's first recorded run (`network.threads.recorded_runs`): its input,
the state its caller gave, its final answer as `expected_output` (the typed output's JSON form
when the last call had one), the thread keys it wrote with the values they ended the run with
as `expected_state`, and its tool calls, with their arguments, as `expected_tools`. The
thread's later runs are not cases: a case is one run on a fresh state, and those runs read a
conversation a case does not hold. `metadata` names the source thread and run.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from network.errors import ConfigurationError
from network.evals.cases import Case, Dataset, DatasetError, ExpectedToolCall
from network.network import Network
from network.run.thread_ref import ThreadRef
from network.threads.recorded_runs import (
    RecordedTurn,
    pointer_parts,
    read_thread,
    recorded_turns,
)
from network.threads.resolve import open_store
from network.threads.thread_data import Thread

_SCOPED = ("user:", "app:", "temp:")


def case_of(thread: Thread, name: str | None = None) -> Case:
    """The case a stored thread's first run makes (see the module docstring)."""
    turn = recorded_turns(list(thread.results))[0]
    last = turn.calls[-1]
    expected: Any = None
    if last.output_value is not None:
        expected = last.output_value
    else:
        texts = [m.content for m in last.output if getattr(m, "content", None)]
        expected = texts[-1] if texts else None
    tools = [
        ExpectedToolCall(
            name=record.name,
            arguments=record.arguments if isinstance(record.arguments, dict) else None,
        )
        for call in turn.calls
        for record in call.tool_calls
    ]
    return Case(
        name=name or thread.thread_id,
        input=turn.input,
        state=turn.state,
        expected_output=expected,
        expected_state=_written(turn),
        expected_tools=tools,
        metadata={"thread": thread.thread_id, "run": turn.run_id},
    )


def _written(turn: RecordedTurn) -> dict[str, Any]:
    """The thread keys the run wrote, with the values they ended it with (its state deltas,
    applied in order over the state its caller gave)."""
    import jsonpatch  # noqa: PLC0415 (exports only)

    document: dict[str, Any] = copy.deepcopy(turn.state)
    written: set[str] = set()
    for call in turn.calls:
        for op in call.state_delta:
            parts = pointer_parts(op.get("path", ""))
            if not parts or parts[0].startswith(_SCOPED):
                continue
            try:
                jsonpatch.apply_patch(document, [op], in_place=True)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
                continue  # a write the delta cannot replay here: not expected of the case
            written.add(parts[0])
    return {key: document[key] for key in sorted(written) if key in document}


async def case_from_thread(
    network: Network[Any], thread: ThreadRef | str, name: str | None = None
) -> Case:
    """The case the stored `thread` of `network`'s app makes (default name: its id)."""
    ref = ThreadRef.of(thread)
    if ref is None:
        raise ConfigurationError("case_from_thread: give the thread (a ThreadRef or an id)")
    return case_of(await read_thread(ref, network.name), name)


async def dataset_from_threads(
    network: Network[Any],
    store: Any = None,
    *,
    name: str | None = None,
    thread_ids: Sequence[str] | None = None,
    user_id: str | None = None,
) -> Dataset:
    """A dataset of the stored threads of `network`'s app in `store` (all of them, most
    recent first, or `thread_ids` in that order), one case each; threads with no agent call
    are left out (none left is a `DatasetError`)."""
    opened, owned = open_store(store)
    try:
        if thread_ids is None:
            listed = await opened.list_threads(app_name=network.name, user_id=user_id)
            thread_ids = [info.thread_id for info in listed]
        cases = []
        for thread_id in thread_ids:
            found = await read_thread(
                ThreadRef(thread_id, user_id=user_id, store=opened), network.name
            )
            if len(found.results):
                cases.append(case_of(found))
    finally:
        if owned:
            await opened.close()
    if not cases:  # a dataset holds a case at least (`Dataset`): say why there is none
        whose = "" if user_id is None else f" of user {user_id!r}"
        raise DatasetError(
            f"no stored thread of app {network.name!r}{whose} has an agent call to make a case of"
        )
    return Dataset(name=name or network.name, cases=cases)
