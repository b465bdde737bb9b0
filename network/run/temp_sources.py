"""The `temp:` texts a run's failure must not quote: its own state's, and every state it ran.

A run's failure may quote a `temp:` value (`network.state.temp_masks`) from a store other than
the run's own: a parallel branch's (a copy of the run's state that a failed branch never merges
back), a sub-run's (`as_tool`: its own state), or, in a sub-run, its caller's (`state_in`
copies a caller's key under another name). Masking with the run's own store alone let such a
value through into the `run.failed` log line, the failed run's span and a server's error
message. So a run keeps, in its locals (shared by its branches), the texts of the branch stores
it ran and the stores of the sub-runs under way (their texts kept once they end), and a
sub-run knows its caller: `run_masks(ctx)` masks all of them.

When the run fails, its masks travel with the exception (`attach_temp_masks`), as its partial
result does: a server screening the error for a remote client (`network.serving.screening`)
masks the library error's text with them (`error_temp_masks`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from network.run.context import RunContext
from network.state.temp_masks import Masks, temp_texts

_KEY = "network.run.temp_sources"
_MASKS = "_agent_network_temp_masks"  # the attribute a failed run's masks ride on
_MOST_CALLERS = 64  # sub-runs nested deeper than any run makes: a cycle guard


class _Sources:
    """One run's other stores (see the module docstring)."""

    __slots__ = ("caller", "running", "texts")

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}  # text -> "[temp:key]", of the stores already done
        self.running: list[Any] = []  # the stores of the sub-runs under way
        self.caller: RunContext | None = None  # the run this one is a sub-run of


def _sources(ctx: RunContext) -> _Sources:
    return ctx.local(_KEY, _Sources)


def keep_branch_texts(ctx: RunContext, kv: Any) -> None:
    """A parallel branch's store ran: its `temp:` texts are masked in the run's failure."""
    texts = temp_texts(kv)
    if texts:
        _sources(ctx).texts.update(texts)


def link_subrun(sub: RunContext, caller: RunContext) -> None:
    """`sub` runs inside `caller`: each one's `temp:` texts are masked in the other's failure."""
    _sources(caller).running.append(sub.state.kv)
    _sources(sub).caller = caller


def unlink_subrun(sub: RunContext, caller: RunContext) -> None:
    """`sub` ended: its store's `temp:` texts as they ended are kept for `caller`'s failure."""
    sources = _sources(caller)
    kv = sub.state.kv
    sources.running = [other for other in sources.running if other is not kv]
    sources.texts.update(temp_texts(kv))


def run_masks(ctx: RunContext) -> Masks:
    """Every `temp:` text a failure of `ctx`'s run must not quote, longest first."""
    found: dict[str, str] = {}
    run: RunContext | None = ctx
    for _ in range(_MOST_CALLERS):
        if run is None:
            break
        found.update((text, marker) for text, marker in temp_texts(run.state.kv))
        sources = run.engine.locals.get(_KEY)
        if sources is None:
            break
        for text, marker in sources.texts.items():
            found.setdefault(text, marker)
        for kv in sources.running:
            for text, marker in temp_texts(kv):
                found.setdefault(text, marker)
        run = sources.caller
    return sorted(found.items(), key=lambda pair: -len(pair[0]))


def attach_temp_masks(error: BaseException, masks: Masks) -> None:
    """Let `error` carry its run's masks to whoever screens it for a client (replacing an
    inner run's: the outer run's include them)."""
    with contextlib.suppress(AttributeError):  # a type refusing new attributes: unmasked
        setattr(error, _MASKS, masks)


def error_temp_masks(error: BaseException) -> Masks:
    """The masks the failed run attached to `error` (none when it did not)."""
    masks = getattr(error, _MASKS, None)
    return masks if isinstance(masks, list) else []
