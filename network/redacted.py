"""A database URL as an error or a repr shows it: its password as `***`.

Errors are logged and reprs printed, and both are read by people who hold no credentials.
The one rule for every place that shows a store's URL: a thread store's errors, a
`ThreadRef` or a `Memories` printed, the durable engine's errors, an MCP server's record.
"""

from __future__ import annotations

import re

_PASSWORD = re.compile(r"^([^:/?#]+://[^:/?#@]*):[^/?#]*@")  # to the last @ of the host part


def shown_url(url: str) -> str:
    """`url` with its password, if any, as `***` (`postgresql://app:***@db/app`)."""
    return _PASSWORD.sub(r"\1:***@", url)


__all__ = ["shown_url"]
