"""`Record`: JSON round trip for the library's slotted dataclasses, through pydantic.

Messages and agent-call results are built on every step of every run, so they are plain
slotted dataclasses: about a quarter of the memory of a pydantic model (no per-instance dict)
and a quarter of the time to build. Building one does not validate; crossing a boundary does:
`from_dict` / `from_json` validate through a pydantic `TypeAdapter` built once per class, on
first use, and `to_dict` / `to_json` serialize through the same adapter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeVar

from network.utf8 import unencodable, utf8_copy

if TYPE_CHECKING:
    from pydantic import TypeAdapter

R = TypeVar("R", bound="Record")

_adapters: dict[type, TypeAdapter[Any]] = {}


def record_adapter(cls: type[R]) -> TypeAdapter[R]:
    """The (cached) pydantic adapter that validates and serializes `cls`."""
    adapter = _adapters.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter  # noqa: PLC0415 (pydantic: built on first use)

        adapter = _adapters[cls] = TypeAdapter(cls)
    return adapter


class Record:
    """Base of the slotted record dataclasses: `to_dict`, `to_json`, `from_dict`, `from_json`."""

    __slots__ = ()

    def to_dict(
        self, *, mode: Literal["python", "json"] = "python", exclude: set[str] | None = None
    ) -> dict[str, Any]:
        """The fields as a dict (`mode="json"`: JSON-ready values only)."""
        return record_adapter(type(self)).dump_python(self, mode=mode, exclude=exclude)  # type: ignore[no-any-return]

    def to_json(
        self, *, exclude: set[str] | None = None, fallback: Any = None, indent: int | None = None
    ) -> str:
        """The record as JSON text; `fallback(value)` serializes what pydantic cannot.

        Text with no UTF-8 form (a lone surrogate, as a custom model's answer or a tool's
        result may hold) becomes U+FFFD in the JSON (`network.utf8`), as the model clients
        mend their answers: a record is written to a store or a wire, and refusing it there
        would fail a run whose model call already succeeded. Bytes that are not UTF-8 (a
        tool's result) become `{"base64": ...}`, as the model read them (`bytes_text`).
        Only such a record pays for the second pass (decision: mended where encoding fails,
        not checked on every step).
        """
        adapter = record_adapter(type(self))
        try:
            data = adapter.dump_json(self, exclude=exclude, fallback=fallback, indent=indent)
        except ValueError as exc:  # pydantic's PydanticSerializationError
            if not unencodable(exc):
                raise
            from pydantic_core import to_json  # noqa: PLC0415 (pydantic: built on first use)

            mended = utf8_copy(adapter.dump_python(self, exclude=exclude))
            data = to_json(mended, fallback=fallback, indent=indent)
        return data.decode()

    @classmethod
    def from_dict(cls: type[R], data: Any) -> R:
        """A record validated from a dict (raises pydantic's `ValidationError`)."""
        return record_adapter(cls).validate_python(data)

    @classmethod
    def from_json(cls: type[R], text: str | bytes) -> R:
        """A record validated from JSON text (raises pydantic's `ValidationError`)."""
        return record_adapter(cls).validate_json(text)
