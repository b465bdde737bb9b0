"""`OutputSpec`: an agent's `output_type` as a request shape, an answer check and a re-ask.

The modes and the re-ask rule are described in `agents.capabilities.output`.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agents.tools._finite import first_non_finite
from network.errors import ConfigurationError, OutputValidationError
from network.history.messages import AssistantMessage, SystemMessage, UserMessage
from network.numbers import check_number

if TYPE_CHECKING:
    from pydantic import TypeAdapter

OutputMode = Literal["auto", "native", "tool", "prompted"]
OUTPUT_MODES = ("auto", "native", "tool", "prompted")
FINAL_OUTPUT_TOOL = "final_output"
WRAPPER_KEY = "response"
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.S)
_MAX_QUOTED = 2000  # characters of a failed answer quoted back to the model


@dataclass(slots=True)
class Attempt:
    """What one final answer was, and why it did not validate."""

    raw: str
    errors: list[str]


@dataclass(slots=True)
class OutputAttempts:
    """One agent call's rejected final answers, whichever check rejected them (its type, an
    output validator): they share the agent's `output_retries` (an `AgentCall.note`)."""

    attempts: list[Attempt] = field(default_factory=list)


def exhausted(
    agent: str, attempts: list[Attempt], why: str, *, note: str = "", errors: str = "last errors"
) -> OutputValidationError:
    """The error of an agent call whose final answers all failed their checks: `why` they
    failed, after how many attempts (`note` added), then the last answer's `errors` and (the
    start of) that answer."""
    last = attempts[-1]
    shown = last.raw if len(last.raw) <= 300 else last.raw[:300] + "..."
    return OutputValidationError(
        f"agent {agent!r}: {why} after {len(attempts)} attempt(s){note}; "
        f"{errors}: {'; '.join(last.errors)}; last answer: {shown!r}",
        agent=agent,
        attempts=len(attempts),
        errors=[attempt.errors for attempt in attempts],
        raw=last.raw,
    )


class OutputSpec:
    """An agent's `output_type`, prepared once: validator, JSON schema, request shapes."""

    def __init__(self, agent: str, output_type: Any, mode: str, retries: int) -> None:
        if mode not in OUTPUT_MODES:
            raise ConfigurationError(
                f"agent {agent!r}: output_mode {mode!r} is not one of {OUTPUT_MODES}"
            )
        check_number(f"agent {agent!r}: output_retries", retries, integer=True)
        # pydantic loads with the first agent given an output_type, not with `import agents`.
        from pydantic import TypeAdapter  # noqa: PLC0415 (see above)

        try:
            self.adapter: TypeAdapter[Any] = TypeAdapter(output_type)
            schema = self.adapter.json_schema()
        except Exception as exc:  # pydantic cannot build a validator or schema for it
            raise ConfigurationError(
                f"agent {agent!r}: output_type {output_type!r} cannot be validated: {exc}"
            ) from exc
        self.agent = agent
        self.type = output_type
        self.mode = mode
        self.retries = retries
        self.wrapped = schema.get("type") != "object"
        if self.wrapped:
            defs = schema.pop("$defs", None)
            schema = {
                "type": "object",
                "properties": {WRAPPER_KEY: schema},
                "required": [WRAPPER_KEY],
            }
            if defs:
                schema["$defs"] = defs
        self.schema: dict[str, Any] = schema
        title = getattr(output_type, "__name__", None) or "output"
        self.name = re.sub(r"[^A-Za-z0-9_-]", "_", str(title))[:64] or "output"
        self.tool_schema = {
            "type": "function",
            "function": {
                "name": FINAL_OUTPUT_TOOL,
                "description": "Give your final answer. Call this once, when you are done.",
                "parameters": self.schema,
            },
        }
        self.response_format = {
            "type": "json_schema",
            "json_schema": {"name": self.name, "schema": self.schema, "strict": False},
        }
        self.instructions = (
            "Answer with only a JSON value (no other text) that matches this JSON schema:\n"
            + json.dumps(self.schema)
        )

    async def resolve_mode(self, model: Any) -> str:
        """The mode to use with `model`: the agent's own, or what the model says it supports."""
        if self.mode != "auto":
            return self.mode
        says = getattr(model, "structured_output", None)
        if callable(says):
            says = says()
            if inspect.isawaitable(says):
                says = await says
        return says if says in ("native", "tool", "prompted") else "prompted"

    # -- the request ---------------------------------------------------------------------

    def shape(
        self, mode: str, system: list[Any], tools: list[dict[str, Any]], tool_choice: str | None
    ) -> tuple[list[Any], list[dict[str, Any]], str | None, dict[str, Any] | None]:
        """(system, tools, tool_choice, response_format) of a request in `mode`."""
        if mode == "native":
            return system, tools, tool_choice, self.response_format
        if mode == "tool":
            choice = FINAL_OUTPUT_TOOL if not tools else "required"
            return system, [*tools, self.tool_schema], choice, None
        return [*system, SystemMessage(self.instructions)], tools, tool_choice, None

    # -- the answer ----------------------------------------------------------------------

    def final_answer(self, mode: str, message: AssistantMessage) -> str | None:
        """The raw text of a final answer, or None when the message calls the agent's tools.

        In tool mode the `final_output` call leaves `message.tool_calls` and its arguments
        become `message.content` (the model's own text, if any, is dropped: the typed answer
        is the message).
        """
        calls = message.tool_calls
        if mode == "tool":
            final = [c for c in calls if c.name == FINAL_OUTPUT_TOOL]
            if final:
                message.tool_calls = [c for c in calls if c.name != FINAL_OUTPUT_TOOL]
                arguments = final[-1].arguments
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                message.content = text
                return text
        if calls:
            return None
        return message.content or ""

    def validate(self, raw: str) -> Any:
        """The validated value of a raw answer; `ValueError` with readable errors if not."""
        fenced = _FENCE.match(raw)
        text = fenced.group(1) if fenced else raw
        try:
            # NaN and infinity are refused as JSON has no form for them: a state key, a
            # thread store and a client could never take the value (`_finite_float`)
            data = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
        except ValueError as exc:
            raise OutputInvalid([f"the answer is not valid JSON: {exc}"]) from exc
        except RecursionError as exc:  # a model's garbage, not the run's failure: re-asked
            raise OutputInvalid(["the answer is not valid JSON: it is nested too deeply"]) from exc
        if self.wrapped and isinstance(data, dict) and set(data) == {WRAPPER_KEY}:
            data = data[WRAPPER_KEY]
        try:
            value = self.adapter.validate_python(data)
        except sys.modules["pydantic_core"].ValidationError as exc:  # loaded with the adapter
            raise OutputInvalid(
                [
                    f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
                    for error in exc.errors(include_url=False)
                ]
            ) from exc
        # pydantic reads the strings "nan" and "inf" as floats: refused as the JSON constants
        # are, since no state key, store or client could take the value
        found = first_non_finite(value)
        if found is not None:
            where = ".".join(str(key) for key in found[0]) or "(root)"
            raise OutputInvalid([f"{where}: Input should be a finite number, got {found[1]}"])
        return value

    def partial(self, text: str) -> Any:
        """The value a streaming answer's JSON text starts (None when it is not JSON yet)."""
        fenced = re.match(r"^\s*```(?:json)?\s*\n?", text)
        if fenced:
            text = text[fenced.end() :].split("```", 1)[0]
        if not text.strip():
            return None
        from pydantic_core import from_json  # noqa: PLC0415 (loaded with the adapter)

        try:
            data = from_json(text, allow_partial="trailing-strings")
        except ValueError:
            return None
        if self.wrapped:
            return data.get(WRAPPER_KEY) if isinstance(data, dict) else None
        return data

    def feedback(self, mode: str, attempt: Attempt) -> UserMessage:
        """The message that replaces a failed attempt in the next request."""
        quoted = attempt.raw if len(attempt.raw) <= _MAX_QUOTED else attempt.raw[:_MAX_QUOTED]
        how = (
            f"Call {FINAL_OUTPUT_TOOL} with valid arguments."
            if mode == "tool"
            else "Answer again with only the corrected JSON."
        )
        return UserMessage(
            "Your previous answer did not match the required output schema.\n"
            f"Your answer was:\n{quoted}\n"
            "Errors:\n" + "\n".join(f"- {error}" for error in attempt.errors) + f"\n{how}"
        )

    def json_form(self, value: Any) -> Any:
        """The JSON form of a validated value."""
        return self.adapter.dump_python(value, mode="json")


def _no_constant(name: str) -> Any:
    """`json.loads`'s hook for `NaN`, `Infinity` and `-Infinity`, which JSON does not have."""
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """`json.loads`'s hook for a number with a fraction or exponent: `1e999` overflows to
    infinity, refused as the constant `Infinity` is."""
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"{text} is too large for a JSON number")
    return number


class OutputInvalid(ValueError):
    """A final answer did not validate; `errors` says why, one readable line each."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors
