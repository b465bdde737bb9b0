"""`agent-network replay FILE:NETWORK THREAD --store URL|PATH`: today's network against a
recorded thread (`Network.replay`), offline.

    agent-network replay app.py:network t1 --store threads.db --tools recorded
    agent-network replay app.py:network t1 --store postgresql://... --json

The report is printed as text (a line per step, then the first divergence's diffs), or as JSON
with `--json`. Exit status: 0 when every step matched the recording, 1 when the replay
diverged or a replayed run failed, 2 for a bad argument, an unknown thread or a store that
cannot be read (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio

from network.cli.load import CLIError, load_network, store_option
from network.cli.store_check import reason, sqlite_path
from network.errors import ConfigurationError, InvalidIdError, ThreadStoreError
from network.run.thread_ref import ThreadRef
from network.threads.protocol import ThreadNotFoundError


def add_replay_parser(commands: Any) -> None:
    """The `replay` command's arguments."""
    replay = commands.add_parser(
        "replay", help="replay a recorded thread with today's network, offline"
    )
    replay.add_argument("target", metavar="FILE:NETWORK")
    replay.add_argument("thread", help="the recorded thread's id")
    replay.add_argument(
        "--store",
        required=True,
        metavar="URL|PATH",
        help="the thread store holding it: a database URL, an SQLite path or sqlite:PATH",
    )
    replay.add_argument("--user", help="the thread's user (refused if it is another's)")
    replay.add_argument(
        "--tools",
        choices=("recorded", "live"),
        default="recorded",
        help="recorded (default): tool results from the recording, no side effect runs; "
        "live: the tools run and their results are compared",
    )
    replay.add_argument(
        "--on-divergence",
        choices=("stop", "live", "continue"),
        default="stop",
        help="stop there (default), go on live (real model and tools), or go on answering "
        "from the recording",
    )
    replay.add_argument(
        "--routing",
        choices=("today", "recorded"),
        default="today",
        help="today (default): today's router chooses and is compared; recorded: the "
        "recording's choices (an LLM router is not asked)",
    )
    replay.add_argument("--json", action="store_true", help="print the report as JSON")


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay the thread, print the report; 0 matched, 1 diverged or failed."""
    network = load_network(args.target)
    store = store_option(args.store)
    assert store is not None  # --store is required
    try:  # an empty THREAD ("$THREAD" unset) is refused here, by the thread id's own rules
        ref = ThreadRef(args.thread, user_id=args.user, store=store)
    except (ConfigurationError, InvalidIdError) as exc:
        raise CLIError(f"replay: {exc}") from None
    path = sqlite_path(store)  # only read: a path that names no file is not made a new store
    if path is not None and not path.is_file():
        raise CLIError(f"--store: no such thread store file: {path}")

    async def main() -> Any:
        return await network.replay(
            ref, tools=args.tools, on_divergence=args.on_divergence, routing=args.routing
        )

    try:
        report = anyio.run(main)
    except ThreadNotFoundError as exc:
        raise CLIError(str(exc)) from None
    except (ConfigurationError, InvalidIdError) as exc:
        raise CLIError(f"replay: {exc}") from None
    except ThreadStoreError as exc:  # a database that refuses the connection, say
        raise CLIError(f"--store: cannot open the thread store: {reason(store, exc)}") from None
    print(report.to_json() if args.json else report.render())
    if report.error is not None:
        print(f"error: a replayed run failed: {type(report.error).__name__}", file=sys.stderr)
    return 1 if report.diverged or report.error is not None else 0
