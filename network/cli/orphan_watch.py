"""A worker process of `agent-network serve --workers N` ends when its supervisor is gone.

uvicorn's supervisor stops its workers when it is stopped (SIGTERM, SIGINT), but a supervisor
killed outright (kill -9, the OOM killer) cannot: its workers were re-parented and went on
serving, holding the listening socket (a new server on the same port failed with "address in
use") and the old code. So each worker watches its parent: once it has changed, the worker
stops as uvicorn stops it (SIGTERM: the requests in flight end, the store is closed), and if
that has not ended it within `GRACE_S`, it exits. Polled (a sleeping thread, twice a second)
rather than Linux's parent-death signal, so it holds on every platform uvicorn's workers run.
"""

from __future__ import annotations

import os
import signal
import threading
import time

POLL_S = 0.5
GRACE_S = 15.0  # beyond `serve_app.SHUTDOWN_GRACE_S`: the runs under way end first


def exit_when_orphaned(parent: int) -> None:
    """Watch that this process's parent is still `parent` (the supervisor's pid, handed down
    by it: a worker still starting when the supervisor was killed is re-parented already),
    in a daemon thread."""
    threading.Thread(
        target=_watch, args=(parent,), name="agent-network-orphan-watch", daemon=True
    ).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's graceful stop
    time.sleep(GRACE_S)
    os._exit(1)  # the graceful stop hung (a stream that never ends): go anyway
