"""One of the caller's threads (`GET <path>/threads/{threadId}`), for a page that reloads.

A page that reloads lost what the run's stream had told it: the conversation, the state and
the approvals waiting for an answer. It reads them back here, under the same authorization as
a run on the thread (`authorize(request, threadId)`), and answers the approvals with the
next run's `resume`, by their ids:

    {"threadId": "t1",
     "state": {...},                  # the state as the stream last showed it
     "messages": [...],               # AG-UI messages, as MESSAGES_SNAPSHOT carries them
     "interrupts": [{"id", "reason", "message", "toolCallId", "responseSchema",
                     "metadata": {"tool", "agent", "arguments", "proposal"}}]}

- `state` is the thread's state with the proposals of its pending approvals (what the stream
  showed: `network.serving.threads.ThreadView`), so a client that sends it back writes
  nothing.
- `messages` are the stored conversation in the shape a returning client's
  MESSAGES_SNAPSHOT has (`network.agui.snapshot`); absent on a server without a thread store,
  which does not keep the conversation (the client holds it).
- `interrupts` are the AG-UI `Interrupt`s RUN_FINISHED's outcome carried; each `id` is what a
  `resume` entry's `interruptId` names.

A thread of another principal, or none, is 404 `thread_not_found` as for a run on it; an id
no store could keep is 422 `invalid_thread_id`.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import Interrupt

from network.agui.snapshot import agui_messages
from network.serving.threads import ThreadView


def _camel(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def thread_answer(view: ThreadView) -> dict[str, Any]:
    """The JSON answer for `view` (see the module docstring)."""
    answer: dict[str, Any] = {"threadId": view.thread_id, "state": view.state}
    if view.messages is not None:
        answer["messages"] = [_camel(message) for message in agui_messages(view.messages)]
    answer["interrupts"] = [
        _camel(Interrupt(**interrupt.to_agui())) for interrupt in view.interrupts
    ]
    return answer
