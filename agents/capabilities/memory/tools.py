"""The memory tools the model may call: `save_memory` and `recall_memories`.

They read and write the run's namespace (`Memory.namespace_of`): the model never names a
namespace, so it cannot reach another user's memories. A saved memory records the run's
thread and user, so deleting either forgets it (`network.memory.delete_thread`). What the
model sends is checked by the store (a blank or oversized text is the call's error, which
the model reads); a store that fails is the tool's failure, as any tool's.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agents.capabilities.memory.options import Memory
from agents.tools.tool import Tool
from agents.tools.tool_context import ToolContext
from network.errors import InvalidMemoryError, ToolError

__all__ = ["RECALL_TOOL", "SAVE_TOOL", "memory_tools"]

SAVE_TOOL = "save_memory"
RECALL_TOOL = "recall_memories"
_NOBODY = "this conversation has no signed-in user, so nothing can be remembered"


def memory_tools(memory: Memory) -> dict[str, Tool]:
    """The two tools, bound to `memory`'s store and namespace."""

    async def save_memory(ctx: ToolContext, text: str, key: str | None = None) -> dict[str, Any]:
        """Remember a lasting fact or preference about the user for later conversations.

        Args:
            text: the fact, as a short sentence ("Prefers a window seat").
            key: a short name for it; saving again under the same key replaces it.
        """
        run = ctx.run
        namespace = memory.namespace_of(run)
        if namespace is None:
            raise ToolError(_NOBODY, tool=SAVE_TOOL)
        if key is None:
            key = "m_" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
        try:
            item = await memory.store.put(
                namespace,
                key,
                text,
                metadata={"source": "tool", "agent": ctx.agent.name},
                thread_id=run.thread_id,
                user_id=run.user_id,
            )
        except InvalidMemoryError as error:
            raise ToolError(f"not saved: {error}", tool=SAVE_TOOL) from None
        return {"saved": item.key}

    async def recall_memories(ctx: ToolContext, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Search what you remember about the user by meaning.

        Args:
            query: what to look for ("seat preference").
            limit: how many memories at most (1 to 20).
        """
        namespace = memory.namespace_of(ctx.run)
        if namespace is None:
            raise ToolError(_NOBODY, tool=RECALL_TOOL)
        if not 1 <= limit <= 20:
            raise ToolError(f"limit must be from 1 to 20, got {limit}", tool=RECALL_TOOL)
        try:
            found = await memory.store.search(namespace, query, limit=limit)
        except InvalidMemoryError as error:
            raise ToolError(f"cannot search: {error}", tool=RECALL_TOOL) from None
        return [
            {"key": item.key, "text": item.text, "score": round(item.score or 0.0, 3)}
            for item in found
        ]

    return {
        SAVE_TOOL: Tool(save_memory, name=SAVE_TOOL),
        RECALL_TOOL: Tool(recall_memories, name=RECALL_TOOL),
    }
