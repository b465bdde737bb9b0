"""The claim of answers, as every store checks it: each claimed call must still be pending.

`check_claims` is the rule the stores share; where the pending calls live (a dict in memory, a
table in SQL) is each store's own. `claim_once` is a durable run's claim, safe to run again.

A rewind withdraws the pending calls of the agent calls it removes: the store marks each
answered, with `withdrawal(...)` as its answer and no run, so a later answer is refused as for
any answered call (`AlreadyAnsweredError`), saying why, and the tool never runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from network.run.interrupts import AlreadyAnsweredError, InterruptError
from network.threads.protocol import ThreadStore
from network.threads.thread_data import Commit


def withdrawal(checkpoint: int, kept_as: str) -> str:
    """The answer a store keeps for a pending call a rewind to `checkpoint` withdrew (the call
    that asked for it is now in the thread `kept_as` only)."""
    return json.dumps({"withdrawn": {"rewound_to": checkpoint, "kept_as": kept_as}})


def withdrawn_reason(answer: str | None) -> str | None:
    """Why a call was withdrawn, in words, when `answer` (its stored answer) is a withdrawal."""
    if not answer or not answer.startswith('{"withdrawn"'):
        return None
    found = json.loads(answer).get("withdrawn")
    if not isinstance(found, dict):
        return None
    return (
        f"the thread was rewound to checkpoint {found.get('rewound_to')}, before the agent "
        f"call that asked for it (that call is kept in thread {found.get('kept_as')!r})"
    )


def check_claims(
    thread_id: str,
    claimed: Mapping[str, str],
    answered_by: Mapping[str, str | None],
    pending: Mapping[str, object],
    withdrawn: Mapping[str, str] | None = None,
) -> None:
    """Refuse a claim unless every claimed id is pending and unanswered.

    `answered_by`: the ids answered already, with the run that answered each; `pending`: the
    ids still waiting; `withdrawn`: why each call a rewind withdrew was withdrawn (such a call
    is in `answered_by` too). An id in none was never pending on this thread.
    """
    waiting = [call_id for call_id in claimed if call_id not in pending]
    taken = [call_id for call_id in waiting if call_id in answered_by]
    gone = [call_id for call_id in taken if withdrawn and call_id in withdrawn]
    if gone:
        assert withdrawn is not None
        raise AlreadyAnsweredError(
            f"thread {thread_id!r}: {', '.join(gone)} withdrawn: {withdrawn[gone[0]]}; it "
            "cannot be answered, and nothing ran",
            ids=gone,
        )
    if taken:
        first = answered_by[taken[0]]
        by = f" by run {first!r}" if first else ""
        raise AlreadyAnsweredError(
            f"thread {thread_id!r}: {', '.join(taken)} answered already{by}; each pending "
            "call is answered once, and nothing ran this time",
            ids=taken,
            answered_by=first,
        )
    unknown = [call_id for call_id in waiting if call_id not in answered_by]
    if unknown:
        raise InterruptError(
            f"thread {thread_id!r} waits on no call {', '.join(unknown)} "
            f"(pending: {', '.join(pending) or 'none'})"
        )


async def claim_once(store: ThreadStore, thread_id: str, commit: Commit) -> int:
    """`append_results` of a claim, made idempotent for a durable run's recorded claim: when
    the claim was committed by this very run (the step ran, the process died before it was
    recorded), it is taken as done."""
    try:
        return await store.append_results(thread_id, commit)
    except AlreadyAnsweredError as refused:
        if refused.answered_by is None or refused.answered_by != commit.run_id:
            raise
        thread = await store.get_thread(thread_id)
        if thread is None:
            raise
        return thread.revision
