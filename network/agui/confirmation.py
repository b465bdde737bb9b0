"""AG-UI `resume` entries to answers on the thread's pending interrupts.

An interrupt asks for `{"approved": boolean, "reason"?: string}` (its `responseSchema`):

- `status: "resolved"` with `payload.approved` true (or a bare `true`) accepts the call;
  with `payload.editedArgs` (an object: AG-UI 1.0's `approve_with_edits`) the call runs with
  those arguments instead, once the tool's schema accepts them (a bad edit is refused with
  422 naming the field, and the interrupt stays pending);
- `status: "resolved"` with `approved` false (or `false`) rejects it, `reason` told to the model
  (a `reason` that is not a string is refused, 422 naming it);
- `status: "resolved"` with `payload.editedArgs` (an object; AG-UI 1.0's approve_with_edits)
  accepts it with those arguments instead of the model's, where the library's answers can
  carry edited arguments (`EDITS_SUPPORTED`; else 422);
- `status: "cancelled"` rejects it.

A request on a thread with pending interrupts must answer every one of them; a `resume` on a
thread with none, or naming an unknown interrupt, is refused (409), as is a malformed payload
(422). Nothing is applied when a request is refused. The pairing and the exactly-once
settling of answers are the serving layer's (`network.serving.approvals`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from network.run.context import NetworkLike
from network.run.interrupts import Answer, Interrupt
from network.serving.approvals import pair_answers
from network.serving.errors import RequestError

# Whether an answer can carry edited arguments (AG-UI 1.0's approve_with_edits): a resume
# entry's `payload.editedArgs` then runs the call with those arguments instead.
EDITS_SUPPORTED = "arguments" in {f.name for f in dataclasses.fields(Answer)}


def _answer(entry: Any) -> Answer:
    if entry.status == "cancelled":
        return Answer(interrupt_id=entry.interrupt_id, approved=False, reason="cancelled")
    payload = entry.payload
    if isinstance(payload, bool):
        return Answer(interrupt_id=entry.interrupt_id, approved=payload)
    if isinstance(payload, dict) and "editedArgs" in payload:
        return _edited(entry.interrupt_id, payload)
    if isinstance(payload, dict) and isinstance(payload.get("approved"), bool):
        reason = payload.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise RequestError(
                422,
                "invalid_resume",
                f"resume entry for interrupt {entry.interrupt_id!r}: reason must be a string, "
                f"got {type(reason).__name__}",
                key="reason",
            )
        edited = payload.get("editedArgs")
        if edited is not None and not (isinstance(edited, dict) and payload["approved"]):
            raise RequestError(
                422,
                "invalid_resume",
                f"resume entry for interrupt {entry.interrupt_id!r}: editedArgs must be an "
                "object, sent with approved: true",
            )
        return Answer(
            interrupt_id=entry.interrupt_id,
            approved=payload["approved"],
            reason=reason,
            arguments=edited,
        )
    if isinstance(payload, dict) and "approved" in payload:  # the field named, not the shape
        raise RequestError(
            422,
            "invalid_resume",
            f"resume entry for interrupt {entry.interrupt_id!r}: approved must be a JSON "
            f"boolean (true or false), got {_shown(payload['approved'])}",
            key="approved",
        )
    raise RequestError(
        422,
        "invalid_resume",
        f"resume entry for interrupt {entry.interrupt_id!r}: payload must be "
        f'{{"approved": true|false, "reason"?: string, "editedArgs"?: object}} or a boolean, '
        f"got {_shown(payload)}",
    )


def _shown(payload: Any) -> str:
    """The client's payload as an error shows it: its start only (it may be ~1 MiB)."""
    text = repr(payload)
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text)} characters)"


def _edited(interrupt_id: str, payload: dict[str, Any]) -> Answer:
    """approve_with_edits: accept the call with the arguments the person edited."""
    edited = payload["editedArgs"]
    if not EDITS_SUPPORTED:
        raise RequestError(
            422, "invalid_resume", f"interrupt {interrupt_id!r}: this server takes no editedArgs"
        )
    if not isinstance(edited, dict) or payload.get("approved", True) is not True:
        raise RequestError(
            422,
            "invalid_resume",
            f"resume entry for interrupt {interrupt_id!r}: editedArgs must be a JSON object "
            "of the call's arguments, with approved absent or true",
        )
    fields: dict[str, Any] = {"interrupt_id": interrupt_id, "approved": True, "arguments": edited}
    return Answer(**fields)


def answers_for(
    network: NetworkLike, thread_id: str, pending: list[Interrupt], resume: list[Any] | None
) -> list[tuple[Interrupt, Answer]]:
    """Pair the pending interrupts with the request's answers (empty when nothing waits):
    the entries as `Answer`s, paired by the serving layer (`network.serving.approvals`)."""
    answers = [_answer(entry) for entry in resume] if pending and resume else None
    if not pending and resume:  # refused below, naming the entries
        answers = [Answer(interrupt_id=entry.interrupt_id, approved=False) for entry in resume]
    return pair_answers(network, thread_id, pending, answers, field="resume")
