"""Long-term memory for agents (`Agent(memory=...)`): recall into the instructions at the
start of a run, the `save_memory` / `recall_memories` tools, and extraction of memories from
a finished thread. The store is `network.memory.Memories`. See docs/memory.md."""

from agents.capabilities.memory.capability import MEMORY_RECALLED, MemoryCapability, Recalled
from agents.capabilities.memory.extraction import extract_memories
from agents.capabilities.memory.options import DEFAULT_NAMESPACE, Memory, coerce_memory
from agents.capabilities.memory.tools import RECALL_TOOL, SAVE_TOOL

__all__ = [
    "DEFAULT_NAMESPACE",
    "MEMORY_RECALLED",
    "RECALL_TOOL",
    "SAVE_TOOL",
    "Memory",
    "MemoryCapability",
    "Recalled",
    "coerce_memory",
    "extract_memories",
]
