"""`tasks/cancel` of a task waiting for approvals (`input-required`): ended through their claim.

Such a task has no run: its run ended on approvals kept pending with its thread
(`network.threads.pending`). Cancelling it settles them with the claim an answer makes
(`Commit.answered`, as `network.serving.approvals.settle` does): holding the thread (one request
per thread, from any process on the store), it claims every approval the task waits on, with a
cancellation as the answer, in one commit the store accepts only while every one is still
pending; then, still holding the thread, the task is saved `canceled`. Of a cancel and an
answer racing, exactly one wins:

- the cancel: its claim committed first, so an answer is refused (`thread_busy` while the cancel
  holds the thread; `interrupt_answered` when it read the task before the cancel; after, the
  task has ended) and the approved tool never runs;
- the answer: it holds the thread, or its claim committed first; the cancel is then the
  caller's to apply to the answer's run, as to any running task.

The thread afterwards waits on nothing: its approvals are answered, by `cancel_<task id>`, with
`{"canceled": {"task": <task id>}}`. An AG-UI `resume` naming them is refused (409
`no_pending_interrupt`: it reads what waits under the thread's hold, after the cancel), and
the next run starts from the thread's last commit, as after a message that supersedes pending
calls (`ThreadSession.supersede_pending`): the state as the interrupted run left it (the
proposal never applied), the tool call answered in the conversation as not run by the cancel's
own commit (`network.history.unanswered`), so no call is left there without its result. A call
of the same turn whose answer a run took up and died before saving its result (it may have
run) is not said not run: its result says that run ended before it finished, as a new message
on the thread says it (`UNFINISHED`). On a store that keeps no pending calls (the server
remembers the approvals, `StoredThreads.remember`), the cancel settles them in its memory and
commits the same messages: a result for each call left without one, then what the server
remembered held beside them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from network.history.unanswered import not_run_results
from network.run.interrupts import AlreadyAnsweredError, InterruptError
from network.serving.admission import Admission, StoredAdmission
from network.serving.screening import guarded
from network.serving.threads import ServedThreads
from network.threads.pending import held_by
from network.threads.thread_data import Commit

CANCELED_BY = "cancel_"  # the claim's run: this prefix and the task id
CANCELED_CALL = "its task was cancelled before this call was answered"
T = TypeVar("T")


def canceled_answer(task_id: str) -> str:
    """The answer a cancel of task `task_id` keeps for each approval it waited on."""
    return json.dumps({"canceled": {"task": task_id}})


async def cancel_waiting(
    served: ServedThreads,
    task_id: str,
    context_id: str,
    principal: str | None,
    waited: Sequence[str],
    ended: Callable[[], Awaitable[T]],
) -> T | None:
    """Claim the approvals `waited` of task `task_id` (on thread `context_id`) as canceled, then
    `ended()` (the task saved `canceled`) while the thread is still held; its answer. None
    when an answer came first (it holds the thread, or claimed them): nothing was changed."""

    async def settled(admission: Admission) -> T | None:
        if not waited or not await _claim(admission, task_id, waited):
            return None
        return await ended()

    return await served.holding(context_id, principal, settled)


async def _claim(admission: Admission, task_id: str, waited: Sequence[str]) -> bool:
    """Whether this cancel's claim of `waited` holds (made now, or by an earlier try of the
    same cancel whose task was not saved)."""
    by = CANCELED_BY + task_id
    record = admission.record
    if isinstance(admission, StoredAdmission) and admission.claimed.pending_kept:
        thread = admission.claimed.thread
        if thread is None:
            return False
        answer = canceled_answer(task_id)
        waits = {entry.tool_call_id for entry in thread.pending}
        commit = Commit(
            revision=thread.revision,
            run_id=by,
            answered=dict.fromkeys(waited, answer),
            # the calls answered in the conversation too: none is left without its result;
            # then what a request said beside its answers while a call waited again
            messages=[
                # a call answered already, whose run died before its result was saved, may
                # have run: it is said unfinished (`UNFINISHED`), as a new message says it
                *not_run_results(thread.messages, CANCELED_CALL, waiting=waits),
                *held_by([entry for entry in thread.pending if entry.id in set(waited)]),
            ],
        )
        try:
            await admission.threads.store.append_results(record.thread_id, commit)
        except AlreadyAnsweredError as refused:
            return refused.answered_by == by
        except InterruptError:  # not waited on by this thread (any more)
            return False
        except Exception as error:  # the store failed: `store_failed`, its text logged only
            await guarded("claim_answers", _raise(error))
        return True
    # Pending approvals kept in this process (in memory, or remembered beside a store that
    # does not keep them): held by the admission, no other request can take them meanwhile.
    kept = {interrupt.id for interrupt in record.interrupts}
    if not set(waited) <= kept:
        return False
    record.interrupts = [i for i in record.interrupts if i.id not in set(waited)]
    if isinstance(admission, StoredAdmission):
        await _settle_remembered(admission, by)
    return True


async def _settle_remembered(admission: StoredAdmission, by: str) -> None:
    """On a store that keeps no pending calls: the conversation gets what the claim on one
    that does adds (a result for each call left without one, then the messages the server
    remembered beside the approvals), committed as `by`; then the server remembers only the
    approvals still waiting. Before, the cancel wrote nothing: the remembered message was
    lost, and the next turn said the cancelled call was taken up by a run that died."""
    threads, record = admission.threads, admission.record
    held = threads.held(record.thread_id)
    thread = admission.claimed.thread
    if thread is not None:
        messages = [*not_run_results(thread.messages, CANCELED_CALL), *held]
        if messages:
            commit = Commit(revision=thread.revision, run_id=by, messages=messages)
            await guarded("claim_answers", threads.store.append_results(record.thread_id, commit))
            held = []
    threads.remember(record.thread_id, list(record.interrupts), held)


async def _raise(error: BaseException) -> None:
    raise error
