"""The run tool's arguments and structured result, as an MCP client sends and reads them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool

MAX_INPUT_CHARS = 1_000_000  # a bound on one call's input text, against hostile clients
MAX_ANSWERS = 100  # answers to pending approvals in one call


class ApprovalAnswer(BaseModel):
    """The answer to one approval a thread waits on (an interrupt the last run stopped on)."""

    model_config = ConfigDict(extra="forbid")

    interrupt: str = Field(description="The interrupt's id, from the last call's `interrupts`.")
    # a JSON boolean only, as AG-UI's resume and A2A's answers take it: pydantic's lax bool
    # read "yes", "on", "1" and 1 as an approval, and the call ran on a word nobody meant so
    approved: StrictBool = Field(description="Run the tool call (true) or refuse it (false).")
    reason: str | None = Field(
        default=None, max_length=10_000, description="Why it was refused (told to the model)."
    )


class RunArguments(BaseModel):
    """The arguments of the run tool, as a client sends them."""

    model_config = ConfigDict(extra="forbid")

    input: str = Field(description="The request for the team.", max_length=MAX_INPUT_CHARS)
    state: dict[str, Any] | None = Field(
        default=None, description="Initial state of the run (keys of the network's state)."
    )
    thread: str | None = Field(
        default=None,
        description=(
            "A thread to run on: its conversation and state carry over from one call to the "
            "next, and approvals wait on it. Omitted: a fresh run."
        ),
    )
    answers: list[ApprovalAnswer] | None = Field(
        default=None,
        max_length=MAX_ANSWERS,
        description="Answers to every approval the thread waits on (with `thread`).",
    )


# Nullable as `anyOf` branches of one type each, not `"type": [..., "null"]`: clients that map
# schemas onto a one-type dialect (Gemini's function declarations) read it (the MCP
# Inspector's `--strict` warns about the list form).
NULLABLE_STRING: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "null"}]}

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "output": {**NULLABLE_STRING, "description": "The run's final text."},
        "stop_reason": {"type": "string", "description": "Why the run stopped."},
        "state": {"type": "object", "description": "The run's final state (JSON form)."},
        "thread": {"type": "string", "description": "The thread the run ran on, if any."},
        "interrupts": {
            "type": "array",
            "description": "Approvals the thread now waits on: answer them with `answers`.",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "tool": {"type": "string"},
                    "arguments": {},
                    "message": NULLABLE_STRING,
                },
                "required": ["id", "tool"],
            },
        },
    },
    "required": ["output", "stop_reason", "state"],
}
