"""The one check of a cap on a run's agent calls (`Network(max_iter=...)`, `network.run(...,
max_iter=...)`, `Agent.run(..., max_steps=...)`, a sub-run's and a durable run's).

AgentKit reads `maxIter: 0` (and no `maxIter`) as no limit; here every run has a cap (a
router that never stops would spend without end), and 0 is refused like any other number
below 1. A user coming from AgentKit writes 0 meaning "no limit", so its refusal says what to
write instead.
"""

from __future__ import annotations

from typing import Any

from network.errors import ConfigurationError
from network.numbers import check_number


def check_max_iter(field: str, value: Any, *, hint: str, optional: bool = False) -> Any:
    """`value` when it is an int >= 1 (or None, when `optional`); else a `ConfigurationError`
    naming `field`, which for 0 says that 0 is not "no limit" and what to write (`hint`: how
    to get the default cap, "leave it out for the default (100)")."""
    try:
        return check_number(field, value, integer=True, minimum=1, optional=optional)
    except ConfigurationError as error:
        if type(value) is not int or value != 0:
            raise
        raise ConfigurationError(
            f"{error} (0 is not 'no limit', as AgentKit's maxIter is: every run has a cap; "
            f"{hint}, or give the most agent calls a run may make, such as "
            "1000)"
        ) from None


__all__ = ["check_max_iter"]
