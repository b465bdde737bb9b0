"""Long-term memory: what an agent learned in one conversation, recalled in the next.

- `Memories`: the store (namespaces; `put` / `get` / `delete` / `list` / `search` by meaning
  with metadata filters; ttl; `forget` what was taken from a thread or a user), in this
  process, in SQLite (sqlite-vec when loadable) or in PostgreSQL (pgvector HNSW). See
  `network.memory.memories`.
- `MemoryItem` (what it hands back), `NewMemory` (one to write with `put_many`).
- Embedders: `WordLlamaEmbedder` (offline, the default), `LiteLLMEmbedder` (any provider),
  or your own `Embedder`.
- `delete_thread(threads, memories, thread_id)`: a thread and the memories taken from it.

Agents use it through `agents.capabilities.memory` (`Agent(memory=...)`). Needs the
`memory` extra (numpy, wordllama, sqlean-py, sqlite-vec): `pip install 'agent-network[memory]'`.
"""

from __future__ import annotations

from network.memory.cascade import delete_thread, delete_user
from network.memory.embedders import Embedder, LiteLLMEmbedder, WordLlamaEmbedder
from network.memory.items import MemoryItem, Namespace, NewMemory
from network.memory.memories import IN_PROCESS, Memories

__all__ = [
    "IN_PROCESS",
    "Embedder",
    "LiteLLMEmbedder",
    "Memories",
    "MemoryItem",
    "Namespace",
    "NewMemory",
    "WordLlamaEmbedder",
    "delete_thread",
    "delete_user",
]
