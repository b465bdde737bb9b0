"""Persistent threads: a run's conversation and state carried from run to run.

`await network.run(input, thread=ThreadRef("t1", user_id="alice", store=...))` loads the
thread, runs, and commits each completed agent call as it goes, with the approvals and client
tool calls the run stops on (`pending`). Without a thread nothing is stored.

- `ThreadStore`: the protocol a store implements (`BaseStore` helps); see `protocol`.
- `MemoryStore`: in this process's memory.
- `SQLStore`: SQLite (the default, `agent-network.db`) or PostgreSQL, through SQLAlchemy.
  Imported on first use, so `import network` does not load SQLAlchemy.
- `open_store(...)`: what a run does with its thread's `store` (a store, a URL or a path).
- `ThreadRef`: which thread a run continues (also `network.ThreadRef`); `PendingCall`: one
  call a thread waits on (`Thread.pending`).
- `UserStateStore`: deleting a user's `user:` state (both ready stores can).
- `CheckpointStore`: checkpoints, `state_at`, fork and rewind (both ready stores keep them);
  `network.fork(...)` / `network.rewind(...)` use it. See `checkpoint_data` for what they return.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from network.run.thread_ref import ThreadRef
from network.sentinels import DELETED
from network.threads.checkpoint_data import (
    Checkpoint,
    CheckpointNotFoundError,
    CheckpointState,
    ForkResult,
    RewindReport,
    SharedKeyWrite,
    ThreadOrigin,
    TimeTravelError,
    ToolCallNotUndone,
)
from network.threads.checkpoint_store import CheckpointStore
from network.threads.decoded import DecodedCache
from network.threads.ledgers import budget_figures
from network.threads.memory import MemoryStore
from network.threads.pending import PendingCall
from network.threads.protocol import (
    BaseStore,
    ThreadExistsError,
    ThreadNotFoundError,
    ThreadStore,
    UserStateStore,
)
from network.threads.resolve import open_store
from network.threads.session import ThreadSession
from network.threads.thread_data import (
    ANONYMOUS_USER,
    Commit,
    ResultRecord,
    SharedWrite,
    Thread,
    ThreadInfo,
)
from network.threads.urls import DEFAULT_STORE, STORE_ENV, store_url

if TYPE_CHECKING:
    from network.threads.session import ThreadSession
    from network.threads.sql import SQLStore

__all__ = [
    "ANONYMOUS_USER",
    "DEFAULT_STORE",
    "DELETED",
    "STORE_ENV",
    "BaseStore",
    "Checkpoint",
    "CheckpointNotFoundError",
    "CheckpointState",
    "CheckpointStore",
    "Commit",
    "DecodedCache",
    "ForkResult",
    "MemoryStore",
    "PendingCall",
    "ResultRecord",
    "RewindReport",
    "SQLStore",
    "SharedKeyWrite",
    "SharedWrite",
    "Thread",
    "ThreadExistsError",
    "ThreadInfo",
    "ThreadNotFoundError",
    "ThreadOrigin",
    "ThreadRef",
    "ThreadSession",
    "ThreadStore",
    "TimeTravelError",
    "ToolCallNotUndone",
    "UserStateStore",
    "budget_figures",
    "open_store",
    "store_url",
]


def __getattr__(name: str) -> Any:
    if name == "SQLStore":
        from network.threads.sql import SQLStore  # noqa: PLC0415 (sqlalchemy)

        return SQLStore
    raise AttributeError(f"module 'network.threads' has no attribute {name!r}")
