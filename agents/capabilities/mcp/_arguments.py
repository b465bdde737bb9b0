"""Checking a model's arguments against an MCP tool's `inputSchema` (JSON Schema).

The server's schema is foreign input: it is checked once, when the tool is listed (a schema
that is not valid JSON Schema makes the tool unusable, with an error naming it), and each call's
arguments are validated before anything is sent, so the model reads a precise error instead of
whatever the server would say. `jsonschema` does the work (the dialect the schema names in
`$schema`, else draft 2020-12, the one MCP specifies); references are never fetched from the
network: one that does not resolve within the schema is an error naming it, the call not sent
(when its arguments reach it). NaN and infinity, which JSON Schema's numbers take and the SDK
would send as null, are refused first, as `@tool` arguments refuse them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents.tools._finite import first_non_finite
from network.errors import ConfigurationError, ToolError

ArgumentsCheck = Callable[[Mapping[str, Any]], None]


def arguments_check(tool: str, schema: Mapping[str, Any]) -> ArgumentsCheck:
    """A function raising `ToolError` (naming `tool` and every problem) for bad arguments.

    Raises `ConfigurationError` when `schema` itself is not a valid JSON Schema.
    """
    import jsonschema  # noqa: PLC0415 (a dependency of mcp: only MCP tools load it)
    from referencing.exceptions import Unresolvable  # noqa: PLC0415 (jsonschema's)

    schema = dict(schema)
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigurationError(
            f"MCP tool {tool!r}: its inputSchema is not valid JSON Schema: {exc.message}"
        ) from exc
    validator = validator_class(schema)

    def check(arguments: Mapping[str, Any]) -> None:
        # JSON Schema's numbers take NaN and infinity, which the SDK would send as null
        found = first_non_finite(arguments)
        if found is not None:
            where, number = found
            raise ToolError(
                f"tool {tool!r}: invalid arguments: {'.'.join(str(p) for p in where)}: "
                f"Input should be a finite number, got {number}",
                tool=tool,
            )
        try:
            problems = sorted(
                validator.iter_errors(arguments), key=lambda error: list(error.absolute_path)
            )
        except Unresolvable as exc:  # a `$ref` to nowhere, or elsewhere: never fetched
            ref = str(getattr(exc, "ref", ""))[:200]
            raise ToolError(
                f"tool {tool!r}: its inputSchema cannot be checked: the reference {ref!r} "
                "does not resolve within it (references are not fetched)",
                tool=tool,
            ) from exc
        if problems:
            listed = "; ".join(
                f"{'.'.join(str(p) for p in error.absolute_path) or 'arguments'}: {error.message}"
                for error in problems[:10]
            )
            raise ToolError(f"tool {tool!r}: invalid arguments: {listed}", tool=tool)

    return check
