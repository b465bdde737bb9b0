"""Short random identifiers for runs, messages and tool calls."""

from __future__ import annotations

import os


def new_id(prefix: str) -> str:
    """Return `prefix` followed by 16 random hex digits (cheap: no uuid object is built)."""
    return prefix + os.urandom(8).hex()
