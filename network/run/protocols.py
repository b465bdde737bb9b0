"""The small protocols through which the network talks to agents and routers.

`network` imports neither `agents` nor `routers`: anything with these shapes will do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from network.history.results import InferenceResult
    from network.run.context import RunContext


@runtime_checkable
class AgentLike(Protocol):
    """What a network runs: a named thing whose `call` is one inference plus its tool calls."""

    name: str
    description: str

    async def call(self, ctx: RunContext) -> InferenceResult: ...


Router = Callable[["RunContext"], Any | Awaitable[Any]]
"""`router(ctx) -> Agent | name | [Agent | name, ...] | Stop | None`, sync or async."""
