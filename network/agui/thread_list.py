"""The principal's threads (`GET <path>/threads?limit=N`), for a thread switcher such as
CopilotKit's `useThreads`.

The caller is identified as for a run (`authorize(request, None)`: no thread is named), and
sees only its own threads of this network (`network.serving.threads.ServedThreads.
list_threads`): on a store, the threads whose user is the principal in this network's app; in
memory, the threads the principal created in this process. Most recently updated first, at
most `limit` (default 100, at most 1000; `network.serving.limits.list_limit`):

    {"threads": [{"threadId", "createdAt", "updatedAt", "messageCount"}], "hasMore": false}

Times are ISO 8601 in UTC (`createdAt` / `updatedAt` / `messageCount` only for stored
threads: the memory registry does not keep them).
"""

from __future__ import annotations

import datetime
from typing import Any

from network.serving.threads import ThreadHeader


def _iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def listing(headers: list[ThreadHeader], limit: int) -> dict[str, Any]:
    """The answer for the caller's thread headers (newest first)."""
    threads = []
    for header in headers[:limit]:
        entry: dict[str, Any] = {"threadId": header.thread_id}
        if header.created_at is not None:
            entry["createdAt"] = _iso(header.created_at)
        if header.updated_at is not None:
            entry["updatedAt"] = _iso(header.updated_at)
        if header.message_count is not None:
            entry["messageCount"] = header.message_count
        threads.append(entry)
    return {"threads": threads, "hasMore": len(headers) > limit}
