"""What a router decision spent, recorded with it and counted again when it is replayed.

A routing agent (an LLM router) counts its tokens on the run context as it asks its model:
the run's usage totals, `ctx.engine.router_usage` and `ctx.engine.router_calls` (which usage
limits and traces read). A replayed decision does not ask the model again, so those counts would be
missing from a resumed run. The router step records the difference it made to them, and a
replay adds that difference back: a resumed run's usage is the uninterrupted run's.
"""

from __future__ import annotations

from dataclasses import dataclass

from network.history.results import ModelCall, Usage
from network.run.context import RunContext


@dataclass(frozen=True, slots=True)
class RouterSpend:
    """The usage one router decision added to its run (nothing for a plain function)."""

    usage: Usage
    router_usage: Usage | None
    calls: tuple[ModelCall, ...]


@dataclass(frozen=True, slots=True)
class UsageMark:
    """The run's usage counters before a router decision."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    estimated: bool
    router_usage: Usage | None
    calls: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def of(cls, ctx: RunContext) -> UsageMark:
        return cls(
            ctx.engine.prompt_tokens,
            ctx.engine.completion_tokens,
            ctx.engine.total_tokens,
            ctx.engine.usage_estimated,
            ctx.engine.router_usage,
            len(ctx.engine.router_calls),
            ctx.engine.cached_tokens,
            ctx.engine.reasoning_tokens,
        )

    def spent(self, ctx: RunContext) -> RouterSpend | None:
        """What the decision added since this mark; None when it added nothing."""
        usage = Usage(
            prompt_tokens=ctx.engine.prompt_tokens - self.prompt_tokens,
            completion_tokens=ctx.engine.completion_tokens - self.completion_tokens,
            total_tokens=ctx.engine.total_tokens - self.total_tokens,
            estimated=ctx.engine.usage_estimated and not self.estimated,
            cached_tokens=ctx.engine.cached_tokens - self.cached_tokens,
            reasoning_tokens=ctx.engine.reasoning_tokens - self.reasoning_tokens,
        )
        router_usage = (
            ctx.engine.router_usage if ctx.engine.router_usage is not self.router_usage else None
        )
        calls = tuple(ctx.engine.router_calls[self.calls :])
        counted = usage.prompt_tokens or usage.completion_tokens or usage.total_tokens
        if not counted and router_usage is None and not calls:
            return None  # a plain function router: nothing to record
        return RouterSpend(usage, router_usage, calls)


def apply_spend(ctx: RunContext, spend: RouterSpend | None) -> None:
    """Count a replayed decision's usage on the run again, as the live decision did."""
    if spend is None:
        return
    ctx.add_usage(spend.usage)
    if spend.router_usage is not None:
        ctx.engine.router_usage = spend.router_usage
    if spend.calls:
        ctx.engine.router_calls = (*ctx.engine.router_calls, *spend.calls)
