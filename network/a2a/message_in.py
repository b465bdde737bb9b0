"""What an A2A client's message asks for, read as hostile input.

A message (`role` user) carries parts:

- text parts: the user's words, joined by newlines: the run's input and the user message
  appended to the thread;
- a data part `{"answers": [{"interrupt", "approved", "reason"?, "arguments"?}]}`: the
  answers to the approvals its task waits on (`input-required`), one per pending interrupt
  (`arguments`: edited arguments of an approved call, checked by the tool's schema);
- a data part `{"state": {...}}`: writes to the thread's state (unprefixed and `user:` keys,
  through the schema), as an AG-UI client's state is;
- any other data part: JSON the user sent, given to the model as its JSON text.

File parts (`raw`, `url`) are refused: the network reads text and JSON. Anything malformed is
an `InvalidParamsError` naming the part and field, before anything runs.

A data part arrives as a protobuf `Struct`, whose numbers are doubles: the client's `3` reads
as `3.0`. A whole number within 2**53 (where a double is exact) is read back as the integer
the client sent, so state written over A2A holds what the same write over AG-UI holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from a2a.types import ContentTypeNotSupportedError, InvalidParamsError, Message, Role
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, model_validator

from network.run.interrupts import Answer

MAX_PARTS = 64
EXACT = 2**53  # a double holds every integer up to this exactly
MAX_ANSWERS = 100


class AnswerEntry(BaseModel):
    """One answer to an approval, as a client sends it in an `answers` data part."""

    model_config = ConfigDict(extra="forbid")

    interrupt: str = Field(max_length=256)
    # a JSON boolean, as AG-UI's resume takes: pydantic's lax bool read "yes", "on", "1" and 1
    # as an approval (and ran the call) where a client may have meant no such thing
    approved: StrictBool
    reason: str | None = Field(default=None, max_length=10_000)
    arguments: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _edits_approve(self) -> AnswerEntry:
        """Edited arguments come with an approval (as AG-UI's `editedArgs` do): beside a
        rejection they were dropped without a word, the client believing them used."""
        if self.arguments is not None and not self.approved:
            raise ValueError("arguments (edited arguments) go with approved: true only")
        return self


class Control(BaseModel):
    """A data part the server reads itself: answers and/or state writes."""

    model_config = ConfigDict(extra="forbid")

    answers: list[AnswerEntry] | None = Field(default=None, max_length=MAX_ANSWERS)
    state: dict[str, Any] | None = None


@dataclass(slots=True)
class Asked:
    """A message read: its text, the answers and state writes it carries."""

    text: str
    answers: list[Answer] = field(default_factory=list)
    writes: dict[str, Any] = field(default_factory=dict)


def read_message(message: Message) -> Asked:
    """The message's text, answers and state writes, or an A2A error naming what is wrong."""
    if message.role != Role.ROLE_USER:
        raise InvalidParamsError(message="message.role must be ROLE_USER (the user's message)")
    if len(message.parts) > MAX_PARTS:
        raise InvalidParamsError(message=f"message has more than {MAX_PARTS} parts")
    texts: list[str] = []
    asked = Asked(text="")
    for index, part in enumerate(message.parts):
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            try:
                data = _whole_numbers(MessageToDict(part.data))
            except ValueError:  # protobuf's text: NaN or infinity, which JSON has no form for
                raise InvalidParamsError(
                    message=f"message.parts[{index}].data holds NaN or infinity, which JSON "
                    "has no form for"
                ) from None
            if isinstance(data, dict) and data and set(data) <= {"answers", "state"}:
                _read_control(index, data, asked)
            else:
                texts.append(json.dumps(data, ensure_ascii=False))
        elif kind in ("raw", "url"):
            raise ContentTypeNotSupportedError(
                message=f"message.parts[{index}]: file parts ({part.media_type or kind}) are "
                "not accepted; send text or JSON data"
            )
        else:
            raise InvalidParamsError(message=f"message.parts[{index}] has no content")
    asked.text = "\n".join(texts)
    return asked


def _read_control(index: int, data: dict[str, Any], asked: Asked) -> None:
    try:
        control = Control.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'data'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise InvalidParamsError(message=f"message.parts[{index}].data: {problems}") from None
    for entry in control.answers or ():
        asked.answers.append(
            Answer(
                interrupt_id=entry.interrupt,
                approved=entry.approved,
                reason=entry.reason,
                arguments=entry.arguments,
            )
        )
    if control.state:
        asked.writes.update(control.state)


def _whole_numbers(value: Any) -> Any:
    """`value` (a Struct's JSON form) with its whole-number floats as ints (module docstring)."""
    if type(value) is float:
        return int(value) if value.is_integer() and -EXACT <= value <= EXACT else value
    if type(value) is dict:
        return {key: _whole_numbers(item) for key, item in value.items()}
    if type(value) is list:
        return [_whole_numbers(item) for item in value]
    return value
