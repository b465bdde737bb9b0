"""A travel assistant that remembers a user's preferences across threads and processes.

Offline by default (a scripted model that saves what the user says they prefer and answers
with what it recalled); `--model openai/gpt-4o-mini` for a real one. Threads and memories are
kept in SQLite files under `--data` (memories embedded by the offline WordLlama model), so
each command below is a new process and a new conversation, and the second one still knows:

    python examples/memory_assistant.py --user ann --thread trip-1 "I always take a window seat."
    python examples/memory_assistant.py --user ann --thread trip-2 "Book me a flight to Porto."
    python examples/memory_assistant.py --user bob --thread trip-3 "Book me a flight to Porto."

Bob's conversation recalls nothing: memories are kept per user. `--extract` also writes what
the finished thread taught (`extract_memories`), and `--forget` deletes the thread and the
memories taken from it (`delete_thread`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio

from agents import Agent, ModelRequest, ScriptedModel, call, make_model
from agents.capabilities.memory import Memory, extract_memories
from network import Network, ThreadRef
from network.memory import Memories, delete_thread
from network.threads import SQLStore

SYSTEM = "You are a travel assistant. Save lasting preferences with save_memory."


def scripted(request: ModelRequest) -> Any:
    """Offline stand-in for a model: saves a stated preference, else answers with what the
    instructions say it remembers."""
    last = request.history[-1]
    if last.role == "tool":
        return "Noted, I will remember that."
    text = last.content
    if any(word in text.lower() for word in ("always", "prefer", "i like", "i'm", "i am")):
        return call("save_memory", text=text)
    instructions = request.system[0].content
    remembered = [line[2:] for line in instructions.splitlines() if line.startswith("- ")]
    if not remembered:
        return "Booked. Tell me what you prefer and I will remember it."
    return "Booked, keeping in mind: " + "; ".join(remembered)


def extraction(request: ModelRequest) -> str:
    """Offline stand-in for the extraction model: each user line that states a preference."""
    lines = request.history[0].content.splitlines()
    said = [line.removeprefix("user: ") for line in lines if line.startswith("user: ")]
    memories = [
        f'{{"key": "said_{at}", "text": "{text.replace(chr(34), chr(39))}"}}'
        for at, text in enumerate(said)
        if "always" in text or "prefer" in text
    ]
    return '{"memories": [' + ", ".join(memories) + "]}"


def build(memories: Memories, model: Any) -> Network:
    agent = Agent("assistant", system=SYSTEM, model=model, memory=Memory(memories, recall=5))
    return Network(
        "travel",
        agents=[agent],
        # the assistant again while it called tools (its save_memory), then the run ends
        router=lambda ctx: agent if ctx.last_result is None or ctx.last_result.tool_calls else None,
    )


async def main(args: argparse.Namespace) -> None:
    data = Path(args.data)
    data.mkdir(parents=True, exist_ok=True)
    threads = SQLStore(f"sqlite+aiosqlite:///{data / 'threads.db'}")
    memories = Memories(data / "memories.db")
    try:
        if args.forget:
            deleted = await delete_thread(threads, memories, args.thread)
            print(f"Deleted {deleted.threads} thread and {deleted.memories} memories.")
            return
        model = ScriptedModel(scripted) if args.model is None else make_model(args.model)
        result = await build(memories, model).run(
            args.message, thread=ThreadRef(args.thread, user_id=args.user, store=threads)
        )
        print(f"Assistant: {result.output}")
        if args.extract:
            extractor = ScriptedModel(extraction) if args.model is None else model
            written = await extract_memories(memories, extractor, threads, args.thread)
            print(f"Extracted: {[item.text for item in written]}")
        known = await memories.list(("travel", "users", args.user))
        print(f"Memories of {args.user}: {[item.text for item in known]}")
    finally:
        await memories.close()
        await threads.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message", nargs="?", default="Book me a flight to Porto.")
    parser.add_argument("--user", default="ann")
    parser.add_argument("--thread", default="trip-1")
    parser.add_argument("--data", default="memory-assistant-data")
    parser.add_argument("--model", default=None, help="a litellm model (default: offline)")
    parser.add_argument("--extract", action="store_true", help="extract memories afterwards")
    parser.add_argument("--forget", action="store_true", help="delete the thread and its memories")
    arguments = parser.parse_args()
    print(
        "Memory assistant ("
        + ("offline, scripted model" if arguments.model is None else arguments.model)
        + ")"
    )
    sys.exit(anyio.run(main, arguments))
