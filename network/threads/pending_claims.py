"""The claim of answers, as every store checks it: each claimed call must still be pending.

`check_claims` is the rule the stores share; where the pending calls live (a dict in memory, a
table in SQL) is each store's own.
"""

from __future__ import annotations

from collections.abc import Mapping

from network.run.interrupts import AlreadyAnsweredError, InterruptError


def check_claims(
    thread_id: str,
    claimed: Mapping[str, str],
    answered_by: Mapping[str, str | None],
    pending: Mapping[str, object],
) -> None:
    """Refuse a claim unless every claimed id is pending and unanswered.

    `answered_by`: the ids answered already, with the run that answered each; `pending`: the
    ids still waiting. An id in neither was never pending on this thread.
    """
    waiting = [call_id for call_id in claimed if call_id not in pending]
    taken = [call_id for call_id in waiting if call_id in answered_by]
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
