"""Answers to a thread's pending approvals: paired with what waits, settled exactly once.

A run that stops on a tool waiting for a person leaves interrupts pending on its thread (AG-UI
answers them with `resume`; an A2A task in `input-required` is answered by the next message
of its context; an MCP call by its `answers` argument). Whatever the protocol, the answers
go through here:

- `pair_answers`: a request on a thread with pending interrupts must answer every one of them
  (409 `interrupt_pending`), a request answering none when none waits is refused (409
  `no_pending_interrupt`), an answer naming no pending interrupt or a missing one is 409
  `invalid_resume`, and edited arguments the tool's schema refuses are 422 `invalid_resume`
  naming the field. Nothing is applied when a request is refused.
- `settle`: on a thread store the answers are claimed in the store before anything runs, in
  one commit the store accepts only while every one is still pending: whichever request or
  process comes first runs the answered calls, any other gets 409 `interrupt_answered` and
  runs nothing. In memory, the thread's one-run-at-a-time admission does the same: a second
  answer is refused while the first run holds the thread, and finds nothing pending after.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from network.run.context import NetworkLike
from network.run.interrupts import (
    AlreadyAnsweredError,
    Answer,
    Interrupt,
    InterruptError,
    check_edits,
    match_answers,
)
from network.serving.errors import RequestError
from network.serving.screening import guarded
from network.threads.session import ThreadSession


def pair_answers(
    network: NetworkLike,
    thread_id: str,
    pending: Sequence[Interrupt],
    answers: Sequence[Answer] | None,
    *,
    field: str = "resume",
) -> list[tuple[Interrupt, Answer]]:
    """Pair the pending interrupts with the request's answers (empty when nothing waits).

    `field` is where the protocol carries answers (AG-UI's `resume`), named in the refusals.
    """
    if not pending:
        if answers:
            ids = ", ".join(answer.interrupt_id for answer in answers)
            raise RequestError(
                409,
                "no_pending_interrupt",
                f"thread {thread_id!r} has no pending interrupt; cannot resume {ids}",
            )
        return []
    if not answers:
        waiting = ", ".join(f"{i.id} ({i.tool} by {i.agent})" for i in pending)
        raise RequestError(
            409,
            "interrupt_pending",
            f"thread {thread_id!r} is waiting for confirmation of {waiting}; send `{field}` "
            "with an answer for every pending interrupt before starting another run",
        )
    try:
        answered = match_answers(pending, answers)
    except InterruptError as exc:
        raise RequestError(409, "invalid_resume", f"thread {thread_id!r}: {exc}") from exc
    try:
        check_edits(network, answered)
    except InterruptError as exc:  # names the tool and the field, never a value's text
        raise RequestError(422, "invalid_resume", f"thread {thread_id!r}: {exc}") from exc
    return answered


async def settle(
    session: ThreadSession, answered: Sequence[tuple[Interrupt, Answer]], run_id: str
) -> None:
    """Claim the answered interrupts in the store, or 409 when another answer came first."""
    claims = {
        interrupt.id: json.dumps(answer.to_json(), default=str) for interrupt, answer in answered
    }
    try:
        await session.claim(claims, run_id)
    except AlreadyAnsweredError as error:
        raise RequestError(
            409, "interrupt_answered", f"already answered: {', '.join(sorted(claims))}"
        ) from error
    except RequestError:
        raise
    except Exception as error:
        await guarded("claim_answers", _raise(error))


async def _raise(error: BaseException) -> Any:
    raise error
