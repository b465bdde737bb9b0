"""`agent-network dev --reload`: the network loaded again when its file changes.

The dev server stays up (same socket, same page): before each request the file that defines
the network is checked (its size and modification time, then its bytes), and when it changed
the network is loaded again and the dev UI rebuilt around it. The threads stay: they live in
the thread store with `--store`, and otherwise in one in-memory registry that every rebuilt
app shares. A request already running finishes on the network it started with.

Decisions: only the file named by `FILE:NETWORK` is watched and loaded again; modules it imports
are Python's cached ones (restart the command after changing those), because unloading a
module that other loaded code holds on to is not safe in general. A file that no longer
loads (a syntax error, a missing network) leaves the last good network serving, and says
why on stderr, once per change.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from network.cli.load import CLIError
from network.errors import ConfigurationError
from network.network import Network

ASGIApp = Callable[..., Any]


class ReloadingApp:
    """An ASGI app that rebuilds itself from `load()` when `watched` changes.

    Args:
        load: loads the network (again): `load_network` of the command's target.
        build: the ASGI app serving a network.
        watched: the network's file.
        log: where reloads and reload failures are reported (default stderr).
        network: the network already loaded (default: `load()`).
    """

    def __init__(
        self,
        load: Callable[[], Network],
        build: Callable[[Network], ASGIApp],
        watched: Path,
        log: TextIO | None = None,
        network: Network | None = None,
    ) -> None:
        self.load, self.build, self.watched = load, build, watched
        self.log = log if log is not None else sys.stderr
        self.network = network if network is not None else load()
        self.current = build(self.network)
        self._stat = self._signature()
        self._digest = self._hash()
        self.reloads = 0

    def _signature(self) -> tuple[int, int] | None:
        try:
            stat = self.watched.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _hash(self) -> bytes | None:
        try:
            return hashlib.sha256(self.watched.read_bytes()).digest()
        except OSError:
            return None

    def check(self) -> None:
        """Load the network again if its file changed since the last look."""
        signature = self._signature()
        if signature == self._stat:
            return
        self._stat = signature
        digest = self._hash()
        if digest is None or digest == self._digest:  # touched, or gone for a moment
            return
        self._digest = digest
        try:
            network = self.load()
            current = self.build(network)
        except (CLIError, ConfigurationError) as error:
            print(f"reload failed, still serving the last network: {error}", file=self.log)
            return
        self.network, self.current = network, current
        self.reloads += 1
        print(f"reloaded {network.name!r} from {self.watched}", file=self.log, flush=True)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.check()
        await self.current(scope, receive, send)
