"""A thread's commits as marks, and what time travel computes from them, the same for every store.

A store keeps one `Mark` per commit (where the thread stood after it: its revision, how many
calls, messages and summaries it held, which keys the commit wrote) and, per thread key, the
values it took and at which revision (`KeyLog`, or the SQL store's `state_history` table). With
those, the thread at any checkpoint is read, never replayed:

- checkpoint `i` (the call `thread.results[i]`) starts at the mark of the commit that saved it;
  it extends over the commits that followed with no call and no message (a router's writes
  after the run's last call, a rewind to it), and ends before the next call or message;
- its state is each thread key's last value at or before the end's revision.

Marks are cheap (a few integers per commit, and the commit's `effects`: its calls' tool calls
and `user:` / `app:` writes, as JSON text, only when it had any) and a key's values are stored
once per commit that changed it, so neither listing checkpoints, nor reading one, nor the
reports of a fork or a rewind decode a single agent call.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from network.state.scopes import scope_of
from network.threads.checkpoint_data import (
    Checkpoint,
    CheckpointNotFoundError,
    SharedKeyWrite,
    TimeTravelError,
    ToolCallNotUndone,
)
from network.threads.thread_data import Commit


class Mark(NamedTuple):
    """Where a thread stood after one commit (a tuple of atomic values: a memory store keeps
    one per commit, and the garbage collector stops tracing such tuples).

    `calls` is how many agent calls the commit added (its calls are `results - calls` to
    `results - 1`); `summaries` is None when the commit added none (the count is then the
    last mark's that has one). `effects` is the JSON text `commit_effects` made, or None.
    """

    revision: int
    calls: int
    results: int
    messages: int
    summaries: int | None
    at: float
    run_id: str | None
    keys: tuple[str, ...] = ()
    effects: str | None = None


class CallRow(NamedTuple):
    """The columns of a stored agent call that a checkpoint lists (nothing to decode)."""

    agent: str
    run_id: str | None
    at: float


def commit_keys(commit: Commit) -> tuple[str, ...]:
    """The keys a commit writes: thread keys set or removed, `user:` / `app:` writes."""
    return tuple(sorted({*commit.state, *commit.removed, *(w.key for w in commit.shared)}))


def commit_effects(commit: Commit) -> str | None:
    """What a rewind's or fork's report needs of a commit's calls, as JSON text (None: none):
    each tool call `[offset, agent, tool, call id, is_error]` and each `user:` / `app:` write
    `[offset, agent, key, op, source, tool, tool call id, run id]`, `offset` being the call's
    position in the commit."""
    tools: list[list[Any]] = []
    shared: list[list[Any]] = []
    for offset, record in enumerate(commit.results):
        result = record.result
        agent = result.agent
        for call in result.tool_calls:
            tools.append([offset, agent, call.name, call.id, call.is_error])
        for w in result.writes:
            if scope_of(w.key) in ("user", "app"):
                shared.append(
                    [offset, agent, w.key, w.op, w.source, w.tool, w.tool_call_id, w.run_id]
                )
    if not tools and not shared:
        return None
    return json.dumps({"tools": tools, "shared": shared})


def checkpoint_index(thread_id: str, checkpoint: Any, count: int) -> int:
    """The index `checkpoint` names among `count` calls (an int, negative from the end, or a
    `Checkpoint`); `CheckpointNotFoundError` naming the thread otherwise."""
    index = checkpoint.index if isinstance(checkpoint, Checkpoint) else checkpoint
    if isinstance(index, bool) or not isinstance(index, int):
        raise CheckpointNotFoundError(
            f"a checkpoint is an agent call's index (an int), not {type(index).__name__}",
            thread_id=thread_id,
            checkpoint=checkpoint,
        )
    found = index + count if index < 0 else index
    if not 0 <= found < count:
        raise CheckpointNotFoundError(
            f"thread {thread_id!r} has {count} checkpoint(s) (0 to {count - 1}); "
            f"there is no checkpoint {index}",
            thread_id=thread_id,
            checkpoint=checkpoint,
        )
    return found


def predates(thread_id: str, index: int) -> TimeTravelError:
    """The error for a call committed before its store kept checkpoints."""
    return TimeTravelError(
        f"thread {thread_id!r}: call {index} was committed before this store kept "
        "checkpoints, so the thread as it was then cannot be read"
    )


def extends(start: Mark, mark: Mark) -> bool:
    """Whether `mark` (a commit after `start`) still belongs to `start`'s checkpoint."""
    return mark.calls == 0 and mark.messages == start.messages


def span(marks: Sequence[Mark], index: int) -> tuple[int, int] | None:
    """Positions in `marks` (ordered by revision) of the first and last commit of the
    checkpoint of call `index`; None when no mark covers that call."""
    first = bisect.bisect_right(marks, index, key=lambda mark: mark.results)
    if first == len(marks) or marks[first].results - marks[first].calls > index:
        return None
    last = first
    while last + 1 < len(marks) and extends(marks[first], marks[last + 1]):
        last += 1
    return first, last


def summaries_at(marks: Sequence[Mark], last: int) -> int:
    """How many summaries the thread held at `marks[last]`."""
    for mark in reversed(marks[: last + 1]):
        if mark.summaries is not None:
            return mark.summaries
    return 0


def list_checkpoints(marks: Sequence[Mark], calls: Sequence[CallRow]) -> list[Checkpoint]:
    """Every call's checkpoint, oldest first (calls that no mark covers are left out)."""
    found: list[Checkpoint] = []
    append = found.append
    count, known = len(marks), len(calls)
    position = 0
    while position < count:
        start = marks[position]
        messages = start.messages
        last = position + 1  # past the checkpoint's last commit
        while last < count and not marks[last].calls and marks[last].messages == messages:
            last += 1
        if start.calls:
            revision = marks[last - 1].revision
            wrote = start.keys if last == position + 1 else _union(marks[position:last])
            for index in range(start.results - start.calls, min(start.results, known)):
                agent, run_id, at = calls[index]
                append(Checkpoint(index, run_id, agent, at, revision, messages, wrote))
        position = last
    return found


def checkpoint_of(index: int, call: CallRow, start: Mark, marks: Sequence[Mark]) -> Checkpoint:
    """The `Checkpoint` of call `index`, given its first mark and the marks up to its end."""
    return Checkpoint(
        index,
        call.run_id,
        call.agent,
        call.at,
        marks[-1].revision,
        start.messages,
        _union(marks),
    )


def _union(marks: Sequence[Mark]) -> tuple[str, ...]:
    return tuple(sorted({key for mark in marks for key in mark.keys}))


def _effects(marks: Sequence[Mark]) -> list[dict[str, list[list[Any]]] | None]:
    """Each mark's effects, parsed in one call (a rewind may discard thousands of commits)."""
    texts = [mark.effects for mark in marks if mark.effects is not None]
    parsed = iter(json.loads(f"[{','.join(texts)}]"))
    return [None if mark.effects is None else next(parsed) for mark in marks]


def shared_writes_after(marks: Sequence[Mark]) -> list[SharedKeyWrite]:
    """The `user:` / `app:` writes of the commits `marks`, each with its writer.

    A shared key a commit wrote with no call to vouch for it (a router's write after the
    run's last call) is listed with the run alone.
    """
    found: list[SharedKeyWrite] = []
    writing = [mark for mark in marks if any(scope_of(key) != "thread" for key in mark.keys)]
    for mark, effects in zip(writing, _effects(writing), strict=True):
        shared = [key for key in mark.keys if scope_of(key) in ("user", "app")]
        first = mark.results - mark.calls
        vouched: set[str] = set()
        for offset, agent, key, op, source, tool, call_id, run_id in (effects or {}).get(
            "shared", []
        ):
            vouched.add(key)
            found.append(
                SharedKeyWrite(
                    key=key,
                    scope="user" if scope_of(key) == "user" else "app",
                    op=op,
                    checkpoint=first + offset,
                    agent=agent,
                    source=source,
                    tool=tool,
                    tool_call_id=call_id,
                    run_id=run_id,
                )
            )
        for key in shared:
            if key not in vouched:
                found.append(
                    SharedKeyWrite(
                        key=key,
                        scope="user" if scope_of(key) == "user" else "app",
                        run_id=mark.run_id,
                    )
                )
    return found


def tool_calls_after(marks: Sequence[Mark]) -> list[ToolCallNotUndone]:
    """The tool calls of the commits `marks`, in order."""
    found: list[ToolCallNotUndone] = []
    for mark, effects in zip(marks, _effects(marks), strict=True):
        if effects is None:
            continue
        first = mark.results - mark.calls
        for offset, agent, tool, call_id, is_error in effects["tools"]:
            found.append(
                ToolCallNotUndone(
                    checkpoint=first + offset,
                    agent=agent,
                    tool=tool,
                    call_id=call_id,
                    is_error=is_error,
                )
            )
    return found


@dataclass(slots=True)
class KeyLog:
    """Every value each thread key took, by revision (JSON text; None: removed)."""

    revisions: dict[str, list[int]] = field(default_factory=dict)
    values: dict[str, list[str | None]] = field(default_factory=dict)

    def record(self, revision: int, commit: Commit) -> None:
        """Remember what `commit` (now at `revision`) did to the thread keys."""
        for key, text in commit.state.items():
            self._add(key, revision, text)
        for key in commit.removed:
            self._add(key, revision, None)

    def _add(self, key: str, revision: int, text: str | None) -> None:
        self.revisions.setdefault(key, []).append(revision)
        self.values.setdefault(key, []).append(text)

    def at(self, revision: int) -> dict[str, str]:
        """Each key's JSON text at `revision` (keys removed or not yet set left out)."""
        found: dict[str, str] = {}
        for key, revisions in self.revisions.items():
            position = bisect.bisect_right(revisions, revision) - 1
            if position >= 0:
                text = self.values[key][position]
                if text is not None:
                    found[key] = text
        return found

    def upto(self, revision: int) -> KeyLog:
        """A copy holding only what happened at or before `revision`."""
        kept = KeyLog()
        for key, revisions in self.revisions.items():
            cut = bisect.bisect_right(revisions, revision)
            if cut:
                kept.revisions[key] = revisions[:cut]
                kept.values[key] = self.values[key][:cut]
        return kept
