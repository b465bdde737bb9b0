"""Integers as OTLP carries them: an attribute's `int_value` is a signed 64-bit integer.

A Python int past that range (a run's token total summed over many calls, a `UsageLimits` cap
of 10**20, a context policy's own token counter) cannot be encoded: the OTLP exporter drops
the attribute and logs an error with a traceback for every span that has it (seen with
opentelemetry-exporter-otlp-proto-http 1.45). Such a figure is recorded as its decimal text
instead: exact, and it never costs the export or the run. Within the range an int stays an
int.
"""

from __future__ import annotations

from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def otlp_int(value: Any) -> Any:
    """`value` as an attribute OTLP can carry: an int outside int64 as its decimal text;
    anything else (a bool, a float, a text, an int in range) unchanged."""
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        return str(value)
    return value
