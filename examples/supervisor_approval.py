"""A supervisor team with a human approval, a persistent SQLite thread, and time travel.

The porting guide from LangGraph (docs/coming-from-langgraph.md) walks through it. A
supervisor (`routing_agent`, an LLM choosing through tools) sends the task to a researcher,
a writer and a publisher. The researcher's `search` tool puts its findings in state
(`outputs_to_state`); the writer's draft lands in `draft` (`output_key`); the publisher's
`publish` tool needs a person's approval (`requires_confirmation=True`), so the run stops
with the approval pending, committed to the thread in SQLite. A fresh network object (what
another process would build) answers it on the same thread, exactly once. Then the thread is
forked at the researcher's checkpoint with another audience, and the fork's run writes a new
draft whose publication is rejected; the original thread is untouched.

    python examples/supervisor_approval.py                  # offline, on scripted models
    python examples/supervisor_approval.py --store threads.db
    python examples/supervisor_approval.py --model openai/gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import tempfile
from typing import Annotated, Any

import anyio

from agents import Agent, Model, ScriptedModel, call, make_model, tool
from network import AgentNetworkError, AlreadyAnsweredError, Network, Resume, ThreadRef
from network.threads import SQLStore
from routers import routing_agent

TASK = "Write a short release note about our new SQLite thread store, then publish it."
FACTS = {
    "sqlite": [
        "Threads persist to one SQLite file in WAL mode.",
        "A crash loses at most the agent call in flight.",
    ],
}
PUBLISHED: list[str] = []
STATE_SCHEMA = {
    "audience": {"type": str},
    "findings": {"type": list[str]},  # a list: each search appends (merge_lists)
    "draft": {"type": str},
    "published": {"type": dict[str, str]},
}


@tool(outputs_to_state={"findings": {"source": "facts"}})
def search(topic: Annotated[str, "one word to look up, e.g. sqlite"]) -> dict[str, Any]:
    """Look facts up in the team's notes."""
    facts = FACTS.get(topic.strip().lower(), [f"No notes on {topic!r}."])
    return {"facts": facts}


@tool(requires_confirmation=True, outputs_to_state={"published": {}})
def publish(
    title: Annotated[str, "the note's title"], body: Annotated[str, "the note's text"]
) -> dict[str, str]:
    """Publish the release note (a person approves it first)."""
    PUBLISHED.append(title)  # the side effect an approval guards: counted by the demo
    return {"title": title, "body": body}


def _system(request: Any) -> str:
    return "".join(message.content or "" for message in request.system)


def _last_speaker(request: Any) -> str | None:
    """The agent whose line comes last in the router's summary of the conversation."""
    summary = _system(request).split("## Conversation so far", 1)[-1]
    speakers = re.findall(r"^(researcher|writer|publisher):", summary, flags=re.MULTILINE)
    return speakers[-1] if speakers else None


def _supervisor(request: Any) -> Any:
    """Offline supervisor: research, write, publish, then finish."""
    last = _last_speaker(request)
    if "publish result" in _system(request) or "publish error" in _system(request):
        return call("done", summary="The note went through the approval step.")
    following = {None: "researcher", "researcher": "writer", "writer": "publisher"}
    if last in following:
        return call("select_agent", name=following[last], reason="next step of the note")
    return call("done", summary="Nothing left to do.")


def _writer(request: Any) -> str:
    if "for children" in _system(request):
        return "Your chats are now saved in one safe file, even if the computer switches off."
    return "Threads now persist to one SQLite file (WAL); a crash loses at most one call."


def _publisher(request: Any) -> Any:
    draft = _system(request).split("Draft:", 1)[-1].strip()
    return call("publish", title="SQLite threads", body=draft)


def scripted_models() -> dict[str, ScriptedModel]:
    """Answers computed from each request, so the network runs any number of times."""
    return {
        "supervisor": ScriptedModel(_supervisor, name="scripted-supervisor"),
        "researcher": ScriptedModel(lambda r: call("search", topic="sqlite"), name="research"),
        "writer": ScriptedModel(_writer, name="scripted-writer"),
        "publisher": ScriptedModel(_publisher, name="scripted-publisher"),
    }


def build_network(model: str | Model | None = None) -> Network:
    """The team, on `model` (a model string or a `Model`) or the offline scripts."""
    scripted = scripted_models() if model is None else {}
    researcher = Agent(
        "researcher",
        description="Looks facts up with the search tool.",
        system="Call search with one word for the topic of the task.",
        tools=[search],
        tool_choice="search",
        model=scripted.get("researcher", model),
    )
    writer = Agent(
        "writer",
        description="Writes the release note from the findings.",
        system="Write a two-sentence release note for {audience}. Facts: {findings?}",
        model=scripted.get("writer", model),
        output_key="draft",
    )
    publisher = Agent(
        "publisher",
        description="Publishes the written note (a person approves first).",
        system="Publish this note with the publish tool. Draft: {draft?}",
        tools=[publish],
        tool_choice="publish",
        model=scripted.get("publisher", model),
    )
    return Network(
        "release-notes",
        agents=[researcher, writer, publisher],
        router=routing_agent(scripted.get("supervisor", model)),
        state_schema=STATE_SCHEMA,
        max_iter=8,
    )


network = build_network()  # for `agent-network serve examples/supervisor_approval.py:network`


async def demo(model: str | Model | None, store_path: str) -> None:
    """Run, stop for approval, approve from a fresh network, fork, run the fork, reject."""
    team = build_network(model)
    thread = ThreadRef("release-1", store=store_path)
    first = await team.run(TASK, thread=thread, state={"audience": "engineers"})
    print("Agents called:", " -> ".join(r.agent for r in first.results))
    print("Stop reason:", first.stop_reason)
    if first.stop_reason != "interrupted":  # a real model may never call publish
        print("No approval was asked for:", first.summary or first.output)
        return
    async with SQLStore(store_path) as store:  # what another process sees: the thread
        stored = await store.get_thread("release-1")
        assert stored is not None
        waiting = stored.pending_interrupts
    approval = waiting[0]
    print(f"Waiting for approval: {approval.tool}({approval.arguments['title']!r})")
    # A fresh network object and the thread id: all a second process needs.
    approved = await build_network(model).run(Resume([approval.accept()]), thread=thread)
    print("After approval:", approved.stop_reason, "| published:", approved["published"]["body"])
    try:  # a second answer (a double click, another process) is refused; nothing runs again
        await build_network(model).run(Resume([approval.accept()]), thread=thread)
    except AlreadyAnsweredError:
        print("A second approval was refused: AlreadyAnsweredError")
    print("Publish tool ran:", len(PUBLISHED), "time(s)")

    async with SQLStore(store_path) as store:
        checkpoints = await store.checkpoints("release-1")
        print("Checkpoints:", ", ".join(f"{c.index}:{c.agent}" for c in checkpoints))
        researched = next(c for c in checkpoints if c.agent == "researcher")
        fork = await team.fork(
            ThreadRef("release-1", store=store),
            at=researched.index,
            update={"audience": "children"},
            new_thread_id="release-1-kids",
        )
    origin = fork.origin
    new_id = fork.thread.thread_id
    print(f"Forked {origin.parent_thread_id} at checkpoint {origin.checkpoint} as {new_id}")
    kids = ThreadRef("release-1-kids", store=store_path)
    rewritten = await team.run("Rewrite it for children.", thread=kids)
    print("Fork draft:", rewritten["draft"])
    print("Fork stop reason:", rewritten.stop_reason)
    if rewritten.stop_reason == "interrupted":
        pending = rewritten.interrupts[0]
        declined = await team.run(Resume([pending.reject("not for the blog")]), thread=kids)
        print(
            "Fork after rejection:", declined.stop_reason, "| published:", declined.get("published")
        )
    print("Publish tool ran:", len(PUBLISHED), "time(s) in all")
    async with SQLStore(store_path) as store:
        source = await store.get_thread("release-1")
        assert source is not None
        print("Original draft still:", source.full_state()["draft"])


def model_parameter(text: str) -> tuple[str, Any]:
    """`--param KEY=VALUE`: a model parameter, its value read as JSON when it is JSON."""
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a litellm model string; default: offline scripts")
    parser.add_argument("--api-base", help="an OpenAI-compatible server for --model")
    parser.add_argument(
        "--param",
        type=model_parameter,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a model parameter, e.g. max_tokens=128 or seed=1 (with --model)",
    )
    parser.add_argument("--store", help="the SQLite file (default: a temporary one)")
    args = parser.parse_args(argv)
    model = (
        make_model(args.model, api_base=args.api_base, **dict(args.param)) if args.model else None
    )
    if args.model:
        print(f"Running on {args.model}.")
    else:
        print("Running offline on scripted models (pass --model provider/name for a real one).")
    _quiet_logs()
    with tempfile.TemporaryDirectory() as scratch:
        store = args.store or str(pathlib.Path(scratch) / "threads.db")
        try:
            anyio.run(demo, model, store)
        except AgentNetworkError as exc:
            print(f"error: the run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


def _quiet_logs() -> None:
    """An application decides what its logs show; this one only wants warnings."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


if __name__ == "__main__":
    sys.exit(main())
