"""Cases and datasets: what a network is evaluated on, in a file that diffs well.

    name: codegen
    cases:
    - name: add
      input: Write add(a, b) with a test.
      expected_output: Approved.
      expected_state: {plan: "1. add.py\\n2. test_add.py"}
      expected_tools: [save, review]
      limits: {max_model_calls: 10, timeout_s: 30}

A dataset is YAML (`.yaml`, `.yml`: one case a block, the way a reviewer reads a diff) or
JSON (`.json`, written indented, one field a line). Every field is checked when the file is
read: an unknown field, a duplicate case name, a limit that is negative, NaN or infinite, is a
`DatasetError` naming the file, the case and the field; so is a dataset of no case (its
evaluation would pass, checking nothing).

Decisions: `expected_output` is compared as text with the run's output, or with the typed
output's JSON form when the last agent has `output_type` (`network.evals.scorers`);
`expected_state` holds the keys checked (the others are not); `expected_tools` is the tool
calls in the order the run made them, each a tool name or `{name, arguments}` (the arguments
given must match, others are not checked).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from network.errors import ConfigurationError
from network.run.inputs import check_text_input
from network.run.limits import UsageLimits


class DatasetError(ConfigurationError):
    """A dataset file, or a case in it, that cannot be used: the message says where."""


class ExpectedToolCall(BaseModel):
    """One tool call a case expects: the tool, and the arguments that must match (a subset)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None


class CaseLimits(BaseModel):
    """What one case may spend: the run's usage limits, its agent calls and its time."""

    model_config = ConfigDict(extra="forbid")

    max_model_calls: int | None = Field(default=None, ge=0)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_input_tokens: int | None = Field(default=None, ge=0)
    max_output_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    max_agent_calls: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        """A bool is no limit: pydantic would read YAML's `yes` as 1."""
        if isinstance(value, bool):
            raise ValueError(f"a limit is a number, not {str(value).lower()}")
        return value

    def usage_limits(self) -> UsageLimits | None:
        """The run's `UsageLimits`, or None when the case sets none."""
        caps = {
            name: getattr(self, name)
            for name in (
                "max_model_calls",
                "max_tool_calls",
                "max_input_tokens",
                "max_output_tokens",
                "max_cost_usd",
            )
            if getattr(self, name) is not None
        }
        return UsageLimits(**caps) if caps else None


class Case(BaseModel):
    """One input the network is run on, and what is expected of the run.

    Attributes:
        name: unique in its dataset (a test's id).
        input: the user's message.
        state: the state the run starts with (validated by the network's schema).
        expected_output: the final answer: text, or the typed output's JSON form.
        expected_state: state keys and the values they must end with.
        expected_tools: the tool calls the run must make, in order (names, or `{name,
            arguments}`).
        limits: what the case may spend (`CaseLimits`).
        metadata: anything else (tags, a source thread): kept, never read.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    input: str
    state: dict[str, Any] = Field(default_factory=dict)
    expected_output: Any = None
    expected_state: dict[str, Any] | None = None
    expected_tools: list[ExpectedToolCall] | None = None
    limits: CaseLimits | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input")
    @classmethod
    def _runnable_input(cls, value: str) -> str:
        """An input `network.run` would refuse (a NUL, a lone surrogate) is refused on load,
        naming its case, not met as an error of that case's run."""
        return check_text_input(value)  # its MessageError is a ValueError: pydantic's error

    @field_validator("expected_tools", mode="before")
    @classmethod
    def _tool_names(cls, value: Any) -> Any:
        """A bare tool name stands for `{name: ...}`."""
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value


class Dataset(BaseModel):
    """Named cases (`Dataset.load(path)` reads one, `save(path)` writes it)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    cases: list[Case]

    @field_validator("cases")
    @classmethod
    def _unique_names(cls, cases: list[Case]) -> list[Case]:
        if not cases:  # else every evaluation of it passed (0 of 0), a CI gate checking nothing
            raise ValueError("a dataset holds at least one case")
        seen: set[str] = set()
        for case in cases:
            if case.name in seen:
                raise ValueError(f"two cases are named {case.name!r}")
            seen.add(case.name)
        return cases

    @classmethod
    def load(cls, path: str | Path) -> Dataset:
        """The dataset in a `.yaml` / `.yml` / `.json` file, checked (`DatasetError`)."""
        where = Path(path)
        if where.suffix not in (".yaml", ".yml", ".json"):
            raise DatasetError(f"dataset {str(where)!r}: read .yaml, .yml or .json")
        try:
            text = where.read_text(encoding="utf-8")
        except OSError as exc:
            raise DatasetError(f"dataset {str(where)!r}: cannot read it: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(
                f"dataset {str(where)!r}: not UTF-8 text (byte {exc.start})"
            ) from None
        data = _parse(text, where)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise DatasetError(f"dataset {str(where)!r}: {_where(exc, data)}") from None

    def save(self, path: str | Path) -> None:
        """Write the dataset to a `.yaml` / `.yml` / `.json` file (fields left at their
        default are not written)."""
        where = Path(path)
        data = self.model_dump(mode="json", exclude_defaults=True)
        if where.suffix in (".yaml", ".yml"):
            yaml = _yaml(where)
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
            if yaml.safe_load(text) != data:
                # PyYAML writes a NEL (U+0085) raw in a quoted scalar, where reading folds it
                # into a space: such a dataset is written with escapes (all in double quotes)
                text = yaml.safe_dump(data, sort_keys=False, allow_unicode=False, width=100)
        elif where.suffix == ".json":
            text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        else:
            raise DatasetError(f"dataset {str(where)!r}: write .yaml, .yml or .json")
        where.write_text(text, encoding="utf-8")

    def case(self, name: str) -> Case:
        """The case called `name` (`KeyError` naming it otherwise)."""
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"dataset {self.name!r} has no case {name!r}")


MAX_VALUES = 1_000_000
"""The most values (numbers, strings, lists, objects) a dataset file may hold."""
MAX_DEPTH = 100
"""The deepest a dataset's values may nest."""


def _yaml(where: Path) -> Any:
    try:
        import yaml  # noqa: PLC0415 (YAML datasets only; pyyaml is the evals extra's)
    except ImportError:  # pragma: no cover (the test environment has it)
        raise DatasetError(
            f"dataset {str(where)!r}: YAML needs pyyaml (pip install 'agent-network[evals]'); "
            "or use a .json file"
        ) from None
    return yaml


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse(text: str, where: Path) -> Any:
    if where.suffix in (".yaml", ".yml"):
        yaml = _yaml(where)
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise DatasetError(f"dataset {str(where)!r}: not valid YAML: {exc}") from None
        except RecursionError:  # the parser follows nesting by recursion
            raise _too_deep(where) from None
    elif where.suffix == ".json":
        try:
            data = json.loads(text, parse_constant=_no_constants)
        except RecursionError:
            raise _too_deep(where) from None
        except ValueError as exc:
            raise DatasetError(f"dataset {str(where)!r}: not valid JSON: {exc}") from None
    else:
        raise DatasetError(f"dataset {str(where)!r}: read .yaml, .yml or .json")
    _check_values(data, where)
    return data


def _too_deep(where: Path) -> DatasetError:
    return DatasetError(f"dataset {str(where)!r}: nested deeper than {MAX_DEPTH} levels")


def _check_values(data: Any, where: Path) -> None:
    """Every value a dataset holds, walked once without recursion: no NaN or infinity (YAML
    spells them `.nan`, `.inf`), at most `MAX_DEPTH` levels, and at most `MAX_VALUES` values
    counting each use of a YAML alias (ten lines of aliases make billions of values, which
    validation would walk for ever)."""
    pending: list[tuple[Any, int]] = [(data, 0)]
    seen = 0
    while pending:
        value, depth = pending.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise DatasetError(
                f"dataset {str(where)!r}: holds more than {MAX_VALUES:,} values "
                "(each use of a YAML alias counts)"
            )
        if depth > MAX_DEPTH:
            raise _too_deep(where)
        if isinstance(value, float) and not math.isfinite(value):
            raise DatasetError(f"dataset {str(where)!r}: {value!r} is not a number a case may hold")
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)


def _where(error: ValidationError, data: Any) -> str:
    """The first validation error, naming its case and field."""
    first = error.errors()[0]
    place: Sequence[Any] = first["loc"]
    said = ".".join(str(part) for part in place)
    if len(place) >= 2 and place[0] == "cases" and isinstance(place[1], int):
        cases = data.get("cases") if isinstance(data, dict) else None
        name = None
        if isinstance(cases, list) and place[1] < len(cases) and isinstance(cases[place[1]], dict):
            name = cases[place[1]].get("name")
        field = ".".join(str(part) for part in place[2:]) or "case"
        said = f"case {name!r}" if name else f"case {place[1]}"
        said += f", field {field}"
    elif not place:
        said = "the file"
    return f"{said}: {first['msg']}"
