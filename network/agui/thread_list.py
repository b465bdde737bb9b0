"""The principal's threads (`GET <path>/threads?limit=N`), for a thread switcher such as
CopilotKit's `useThreads`.

The caller is identified as for a run (`authorize(request, None)`: no thread is named), and
sees only its own threads of this network: on a store, the threads whose user is the
principal in this network's app; in memory, the threads the principal created in this
process. Most recently updated first, at most `limit` (default 100, at most 1000):

    {"threads": [{"threadId", "createdAt", "updatedAt", "messageCount"}], "hasMore": false}

Times are ISO 8601 in UTC (`createdAt` / `updatedAt` / `messageCount` only for stored
threads: the memory registry does not keep them).
"""

from __future__ import annotations

import datetime
from typing import Any

from network.agui.errors import RequestError

DEFAULT_LIMIT = 100
MAX_LIMIT = 1_000


def list_limit(text: str | None) -> int:
    """The `limit` query parameter: an integer from 1 to `MAX_LIMIT` (422 otherwise)."""
    if text is None:
        return DEFAULT_LIMIT
    if not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise RequestError(
            422, "invalid_limit", f"limit must be an integer from 1 to {MAX_LIMIT}", key="limit"
        )
    return int(text)


def _iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stored_listing(infos: list[Any], limit: int) -> dict[str, Any]:
    """The answer for a store's `ThreadInfo`s (already the principal's, newest first)."""
    threads = [
        {
            "threadId": info.thread_id,
            "createdAt": _iso(info.created_at),
            "updatedAt": _iso(info.updated_at),
            "messageCount": info.message_count,
        }
        for info in infos[:limit]
    ]
    return {"threads": threads, "hasMore": len(infos) > limit}


def memory_listing(thread_ids: list[str], limit: int) -> dict[str, Any]:
    """The answer for the memory registry's thread ids (newest first)."""
    threads = [{"threadId": thread_id} for thread_id in thread_ids[:limit]]
    return {"threads": threads, "hasMore": len(thread_ids) > limit}
