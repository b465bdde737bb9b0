"""An agent's capabilities resolved into the callables of each stage (`Stages`), and the
run's (`run_stages`).

Resolution happens once per agent and set of outer capabilities (the agent step keeps the
last `Stages` and resolves again only when it is called on another network or run), so a
stage no capability implements is an empty tuple: the step tests it and moves on.

Which capabilities count, in order (see `network.run.capability`): the agent's own, then the
run's, then the network's; of the capabilities whose class is `agent_overrides_network`, the
first of each class wins (an agent's context policy replaces its network's default).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError
from network.run.capability import Capability, implements
from network.run.context import NO_RUN_STAGES, RunStages
from network.run.result import Stop

__all__ = ["NO_STAGES", "Stages", "chain", "first_stop", "resolve_stages", "run_stages"]


@dataclass(slots=True, frozen=True)
class Stages:
    """The callables of each stage of an agent call, in the order they run.

    `key` is the tuple of outer capabilities (the run's) these were resolved against; `any`
    says whether any stage is implemented at all."""

    key: tuple[Capability, ...] | None
    capabilities: tuple[Capability, ...]
    wrap_call: tuple[Callable[..., Any], ...] = ()
    instructions: tuple[Callable[..., Any], ...] = ()
    request: tuple[Callable[..., Any], ...] = ()
    wrap_model: tuple[Callable[..., Any], ...] = ()
    answer: tuple[Callable[..., Any], ...] = ()
    tool_calls: tuple[Callable[..., Any], ...] = ()
    wrap_tool: tuple[Callable[..., Any], ...] = ()
    tool_results: tuple[Callable[..., Any], ...] = ()
    output: tuple[Callable[..., Any], ...] = ()
    record: tuple[Callable[..., Any], ...] = ()
    wrap_resume: tuple[Callable[..., Any], ...] = ()


NO_STAGES = Stages(None, ())
"""The stages of an agent no capability touches (and of one not resolved yet)."""


def effective(own: Sequence[Capability], outer: Sequence[Capability]) -> tuple[Capability, ...]:
    """The capabilities that apply to an agent with `own` under `outer` (the run's, then the
    network's), in order, defaults overridden (see the module docstring)."""
    kept: list[Capability] = []
    overriding: set[type[Capability]] = set()
    merging: dict[type[Capability], list[Capability]] = {}
    for capability in (*own, *outer):
        kind = type(capability)
        if kind.agent_overrides_network:
            if kind in overriding:
                continue
            overriding.add(kind)
        if kind.merge:
            merging.setdefault(kind, []).append(capability)
            if len(merging[kind]) > 1:
                continue  # merged into the first of its class, below
        kept.append(capability)
    for kind, found in merging.items():
        if len(found) > 1:
            first = next(i for i, c in enumerate(kept) if c is found[0])
            kept[first] = kind.merge_all(found)
    kept.sort(key=_order)  # stable: equal orders keep the resolution order
    return tuple(kept)


def _order(capability: Capability) -> int:
    return type(capability).order


def resolve_stages(own: Sequence[Capability], outer: tuple[Capability, ...]) -> Stages:
    """The `Stages` of an agent with capabilities `own`, run under `outer`."""
    capabilities = effective(own, outer)
    if not capabilities:
        return Stages(outer, ())

    def bound(stage: str) -> tuple[Callable[..., Any], ...]:
        return tuple(getattr(c, stage) for c in capabilities if implements(c, stage))

    def unwinding(stage: str) -> tuple[Callable[..., Any], ...]:
        return bound(stage)[::-1]  # the way out: the first capability has the last word

    return Stages(
        outer,
        capabilities,
        bound("wrap_call"),
        bound("instructions"),
        bound("request"),
        bound("wrap_model"),
        unwinding("answer"),
        bound("tool_calls"),
        bound("wrap_tool"),
        unwinding("tool_results"),
        unwinding("output"),
        unwinding("record"),
        bound("wrap_resume"),
    )


def run_stages(capabilities: Sequence[Capability]) -> RunStages:
    """A run's `RunStages`: its capabilities (the run's own, then its network's) and the
    callables of the run's stages among them, in order."""
    if not capabilities:
        return NO_RUN_STAGES
    ordered = tuple(sorted(capabilities, key=_order))

    def bound(stage: str) -> tuple[Callable[..., Any], ...]:
        return tuple(getattr(c, stage) for c in ordered if implements(c, stage))

    return RunStages(
        tuple(capabilities), bound("next_call"), bound("run_started"), bound("resumed")
    )


def chain(
    hooks: Sequence[Callable[..., Awaitable[Any]]],
    inner: Callable[..., Awaitable[Any]],
    *leading: Any,
) -> Callable[..., Awaitable[Any]]:
    """`inner` wrapped by `hooks`, the first outermost: calling the result with `*args` calls
    `hooks[0](*leading, *args, proceed)` whose `proceed(*args)` calls the next one, and the
    last one's calls `inner(*args)`."""
    for hook in reversed(hooks):
        inner = functools.partial(_hop, hook, leading, inner)
    return inner


def _hop(
    hook: Callable[..., Awaitable[Any]],
    leading: tuple[Any, ...],
    proceed: Callable[..., Awaitable[Any]],
    *args: Any,
) -> Awaitable[Any]:
    return hook(*leading, *args, proceed)


def first_stop(run: Any, checks: Sequence[Callable[[Any], Any]]) -> Stop | None:
    """The first `Stop` the `next_call` stages `checks` give `run`, or None: the next call may
    go ahead. Anything else a check answers is a `ConfigurationError` naming its capability
    (it was an AttributeError on the answer's missing `reason`)."""
    for check in checks:
        stop = check(run)
        if stop is not None:
            if not isinstance(stop, Stop):
                owner = type(getattr(check, "__self__", check)).__name__
                raise ConfigurationError(
                    f"capability {owner}.next_call returned {stop!r:.100}: return a Stop or None"
                )
            return stop
    return None
