"""The memory capability: `Agent(memory=...)` recalls what it knows about the run's user into
its instructions, and offers the model the memory tools.

Stages: instructions (at the agent's first call of a run, the `recall` memories of the run's
namespace nearest in meaning to the run's input are searched once and added below the
instructions, for every call of the run; a CUSTOM "MemoryRecalled" event and a log line say
which, and the agent's span gets an `agent_network.memory.recalled` event), request (the
`save_memory` and `recall_memories` tools join the tools offered).
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.capabilities.memory.options import Memory
from agents.capabilities.memory.tools import memory_tools
from network.logger import LazyLogger
from network.memory import MemoryItem, Namespace
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.context import RunContext
from network.run.events import MemoryRecalled

__all__ = ["MEMORY_RECALLED", "MemoryCapability", "Recalled"]

MEMORY_RECALLED = MemoryRecalled.NAME
"""The name of the CUSTOM event that says what a run recalled."""

log = LazyLogger("agent_network.memory")


@dataclass(frozen=True, slots=True)
class Recalled:
    """What one run recalled for an agent: the namespace searched and the memories found."""

    namespace: Namespace | None
    items: tuple[MemoryItem, ...]


class MemoryCapability(Capability):
    """An agent's long-term memory (see the module docstring)."""

    def __init__(self, owner: str, memory: Memory) -> None:
        self.owner = owner
        self.memory = memory
        self._tools = memory_tools(memory) if memory.tools else {}
        self._schemas = [tool.schema for tool in self._tools.values()]
        if not memory.tools:
            self.request = None  # type: ignore[assignment]
        if memory.recall == 0:
            self.instructions = None  # type: ignore[assignment]

    async def instructions(self, call: AgentCall, text: str) -> str:
        recalled = await self.recalled(call.run)
        if not recalled.items:
            return text
        lines = "\n".join(f"- {item.text}" for item in recalled.items)
        block = f"{self.memory.heading}\n{lines}"
        return f"{text}\n\n{block}" if text else block

    async def recalled(self, run: RunContext) -> Recalled:
        """What this run recalled for the agent (searched at its first call of the run)."""
        key = (MemoryCapability, self.owner, id(self))
        found = run.engine.locals.get(key)
        if found is None:
            found = run.engine.locals[key] = await self._recall(run)
        return found

    async def _recall(self, run: RunContext) -> Recalled:
        memory = self.memory
        namespace = memory.namespace_of(run)
        query = run.input
        if namespace is None or not isinstance(query, str) or not query.strip():
            return Recalled(namespace, ())
        # stripped before it is cut: a message that opens with 8,000 blanks (a pasted log) was
        # a blank query, the store's InvalidMemoryError, and every run of it failed
        items = await memory.store.search(
            namespace, query.strip()[:8_000], limit=memory.recall, min_score=memory.min_score
        )
        recalled = Recalled(namespace, tuple(items))
        value = {
            "agent": self.owner,
            "namespace": list(namespace),
            "keys": [item.key for item in items],
            "scores": [round(item.score or 0.0, 4) for item in items],
        }
        log.info("memory.recalled", run_id=run.run_id, agent=self.owner, count=len(items))
        emitter = run.engine.emitter
        if emitter.active:
            await emitter.emit(MemoryRecalled(value))
        return recalled

    async def request(self, call: AgentCall) -> None:
        call.tools = {**(call.tools or {}), **self._tools}
        call.schemas = [*(call.schemas or ()), *self._schemas]

    def __repr__(self) -> str:
        return f"MemoryCapability({self.owner!r}, {self.memory!r})"
