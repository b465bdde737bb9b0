"""Extraction: a finished thread's lasting facts and preferences, written as memories.

ADK's `add_session_to_memory` keeps a session's events to search later; here a model reads
the thread's conversation and answers the facts worth keeping, as JSON
(`{"memories": [{"key": "seat", "text": "Prefers a window seat"}]}`), and each is written to
the thread user's namespace with the thread and user it came from, so deleting the thread
or the user forgets them (`network.memory.delete_thread`). A key the model reuses replaces
the memory under it (a preference that changed). Call it when a conversation ends, or after
each run (`await extract_memories(...)` in the background: it touches only the memory store).

The model's answer is checked before anything is written: an answer that is not that JSON,
holds more than `MAX_EXTRACTED` memories, or a key or text the store refuses, is an
`OutputValidationError` (its `raw` the answer) and writes nothing. A key the answer holds
twice keeps its later text. The caller's own arguments (`namespace`, `instructions`) are
checked before the model is asked.
"""

from __future__ import annotations

import json
from typing import Any

from agents.capabilities.memory.options import DEFAULT_NAMESPACE
from agents.models.registry import resolve_model
from network.errors import (
    ConfigurationError,
    InvalidMemoryError,
    OutputValidationError,
    ThreadError,
)
from network.history.messages import SystemMessage, UserMessage
from network.history.model_answer import answer_of
from network.history.model_io import ModelRequest
from network.memory import Memories, MemoryItem, Namespace, NewMemory
from network.memory._checks import check_namespace
from network.threads.ids import check_id
from network.threads.protocol import ThreadStore

__all__ = ["EXTRACTION_PROMPT", "MAX_EXTRACTED", "extract_memories"]

MAX_EXTRACTED = 50
_TRANSCRIPT_CHARS = 60_000  # the conversation's latest characters sent to the model

EXTRACTION_PROMPT = (
    "You read a conversation between a user and an assistant and write down the lasting "
    "facts and preferences about the user worth remembering in later conversations (who "
    "they are, what they like or dislike, their plans). Skip small talk and anything only "
    "true for this conversation. Answer only JSON: "
    '{"memories": [{"key": "short_snake_case_name", "text": "one short sentence"}]}; '
    'reuse a key for the same topic. Answer {"memories": []} when there is nothing.'
)


async def extract_memories(
    memories: Memories,
    model: Any,
    threads: ThreadStore,
    thread_id: str,
    *,
    namespace: Namespace | None = None,
    instructions: str = EXTRACTION_PROMPT,
) -> list[MemoryItem]:
    """Write the memories `model` extracts from thread `thread_id` of `threads`.

    Args:
        memories: the store to write to.
        model: a `Model`, or a litellm model string.
        threads: the thread store holding the thread.
        thread_id: the finished thread.
        namespace: where to write (default: the thread's app and user, as `Memory`'s default
            namespace: `(app_name, "users", user_id)`).
        instructions: what the model is told to do (`EXTRACTION_PROMPT`).

    Returns the memories written (none for a thread without a user message).
    """
    check_id("thread_id", thread_id)
    if namespace is not None:  # the caller's own mistake: said before the model is asked
        namespace = check_namespace(namespace)
    if not isinstance(instructions, str) or not instructions.strip():
        raise ConfigurationError("extract_memories: instructions must be a non-empty string")
    thread = await threads.get_thread(thread_id)
    if thread is None:
        raise ThreadError(f"thread {thread_id!r} does not exist")
    if namespace is None:
        if not thread.user_id:
            raise InvalidMemoryError(
                f"thread {thread_id!r} has no user: give extract_memories a namespace",
                field="namespace",
            )
        values = {"{app_name}": thread.app_name, "{user_id}": thread.user_id}
        namespace = check_namespace(tuple(values.get(label, label) for label in DEFAULT_NAMESPACE))
    transcript = _transcript(thread.messages)
    if not transcript:
        return []
    request = ModelRequest(
        [SystemMessage(instructions)], [UserMessage(transcript)], agent="memory_extraction"
    )
    response = await answer_of(resolve_model(model), None, request)
    raw = response.message.content or ""
    entries = [
        NewMemory(
            key,
            text,
            metadata={"source": "extraction"},
            thread_id=thread_id,
            user_id=thread.user_id or None,
        )
        for key, text in _parsed(raw)
    ]
    if not entries:
        return []
    try:
        return await memories.put_many(namespace, entries)
    except InvalidMemoryError as error:
        raise _refused(raw, f"{error.field}: {error}") from error


def _transcript(messages: Any) -> str:
    """The user's and the assistant's texts, one line each, the latest kept when long."""
    lines = []
    for message in messages:
        role = getattr(message, "role", None)
        content = getattr(message, "content", None)
        if role in ("user", "assistant") and isinstance(content, str) and content.strip():
            lines.append(f"{role}: {content.strip()}")
    if not any(line.startswith("user: ") for line in lines):
        return ""
    return "\n".join(lines)[-_TRANSCRIPT_CHARS:]


def _parsed(raw: str) -> list[tuple[str, str]]:
    """(key, text) of each memory in the model's answer, else `OutputValidationError`."""
    text = raw.strip()
    if text.startswith("```"):  # a fenced answer: the JSON inside
        text = text.strip("`").removeprefix("json").strip()
    try:
        answer = json.loads(text)
    except ValueError:
        raise _refused(raw, "the answer is not JSON") from None
    except RecursionError:  # the decoder follows nesting by recursion
        raise _refused(raw, "the answer's JSON nests too deep") from None
    found = answer.get("memories") if isinstance(answer, dict) else None
    if not isinstance(found, list):
        raise _refused(raw, 'the answer has no "memories" list')
    if len(found) > MAX_EXTRACTED:
        raise _refused(raw, f"{len(found)} memories, over the limit of {MAX_EXTRACTED}")
    pairs: dict[str, str] = {}
    for at, entry in enumerate(found):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("key"), str)
            or not isinstance(entry.get("text"), str)
        ):
            raise _refused(raw, f'memories[{at}] needs a "key" and a "text" string')
        pairs[entry["key"]] = entry["text"]  # a key said twice: the later text
    return list(pairs.items())


def _refused(raw: str, why: str) -> OutputValidationError:
    return OutputValidationError(
        f"memory extraction: the model's answer was refused ({why}); nothing was written",
        agent="memory_extraction",
        attempts=1,
        errors=[[why]],
        raw=raw[:2_000],
    )
