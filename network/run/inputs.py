"""What a run can be asked to do besides answering a message: the inputs of `network.run`.

`network.run(input, ...)` is the one way into a run. Its `input` is either the user's message
(a string) or one of these, each the continuation of a run that stopped:

- `Resume(answers)`: the run stopped on tool calls waiting for a person's confirmation
  (`StopReason.INTERRUPTED`); `answers` accept, edit, respond to or reject each of them
  (`interrupt.accept()`, `.accept(arguments={...})`, `.respond(value)`, `.reject(reason)`).
- `ToolResults(results)`: the run stopped on client tool calls (`StopReason.CLIENT_TOOL`);
  `results` is `{tool_call_id: result}`, one per pending call.

Either names what it continues in one of two ways:

- in process, from the `RunResult` that stopped: `network.run(result.resume(answers))`, or
  `Resume(answers, stopped=result)`;
- from anywhere, by thread: `network.run(Resume(answers), thread=ThreadRef("t1", store=url))`.
  The pending calls are read from the stored thread, so any process holding only the thread
  id can answer them, and the store makes sure each is answered exactly once.

The options of the run that continues (`deps=`, `limits=`, `sinks=`, `durable=`, ...) are
`run`'s own, declared once: a continuation is a run like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError, MessageError
from network.utf8 import lone_surrogate_at


@dataclass(frozen=True, slots=True)
class Resume:
    """Answers to the interrupts a run stopped on; run it with `network.run(Resume(...))`.

    Args:
        answers: an `Answer` per pending interrupt (`interrupt.accept()`, `.accept(arguments=
            {...})`, `.respond(value)`, `.reject(reason)`), or `{interrupt_id: bool}`.
        stopped: the `RunResult` that stopped, when it is at hand; None to continue the
            thread the run names (`thread=`), whose pending interrupts are read from its store.
    """

    answers: Any
    stopped: Any = None

    def __post_init__(self) -> None:
        answers = self.answers
        # an Answer, a list of them, or {interrupt_id: bool}: each answer is checked against
        # what waits when the run continues; text (read letter by letter) or None, here
        if isinstance(answers, str | bytes) or not (
            isinstance(answers, Iterable) or hasattr(answers, "interrupt_id")
        ):
            raise ConfigurationError(
                "Resume takes a list with an Answer per pending interrupt (interrupt.accept(), "
                ".reject(), .respond(value)), or {interrupt_id: True/False}; got "
                f"{type(answers).__name__}"
            )


@dataclass(frozen=True, slots=True)
class ToolResults:
    """Results of the client tool calls a run stopped on; run it with `network.run(...)`.

    Args:
        results: `{tool_call_id: result}` for every pending call (a string is sent to the
            model as it is, anything else as JSON).
        stopped: the `RunResult` that stopped, or None to continue the thread `thread=` names.
    """

    results: Mapping[str, Any]
    stopped: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.results, Mapping):
            raise ConfigurationError(
                f"ToolResults takes {{tool_call_id: result}}, got {type(self.results).__name__}"
            )


RunInput = str | Resume | ToolResults
"""What `network.run` takes as its input: the user's message, or a continuation."""


def check_text_input(text: str) -> str:
    """The user's message a run is given, refused (`MessageError`, field `input`) when no
    thread store could keep it or no model request could carry it: a NUL character
    (PostgreSQL's text has none), or a lone surrogate (no UTF-8 form: JSON may spell one,
    `"\\ud800"`, and a server's `json.loads` keeps it). Taken, the model was asked and paid,
    then the thread's commit failed. The rules of `network.add_messages`, checked before
    anything runs."""
    problem = text_problem(text)
    if problem is not None:
        raise MessageError(f"the run's input holds {problem}", index=None, field="input")
    return text


def text_problem(text: str) -> str | None:
    """What keeps `text` out of a user message (`check_text_input`'s rules), or None."""
    if "\x00" in text:
        return f"a NUL character (at {text.index(chr(0))})"
    at = lone_surrogate_at(text)
    if at is not None:
        return f"a lone surrogate (at {at}), which has no UTF-8 form"
    return None
