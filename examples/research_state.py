"""Haystack's agent with state: `inputs_from_state`, `outputs_to_state` and merge handlers.

The porting guide from Haystack (docs/coming-from-haystack.md) walks through it. A researcher
searches a repository's files with one tool. The repository comes from state
(`inputs_from_state`): the parameter is hidden from the model, which cannot override it. The
tool's result goes to state (`outputs_to_state`): its documents are appended to `documents`
(a `list[Document]` key, so `merge_lists` by default) and its paths are merged into `visited`
by a handler of its own (`unique_sorted`, given on the mapping). After two searches a writer
answers from the documents (`{documents}` in its instructions) into `answer` (`output_key`).

Haystack's agent loops on its tools until an exit condition; here the router is that loop: it
calls the researcher until two searches are done, then the writer, then ends.

    python examples/research_state.py                            # offline, scripted models
    python examples/research_state.py --model openai/gpt-4o-mini
    python examples/research_state.py "How do threads survive a crash?"
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Annotated, Any

from pydantic import BaseModel

from agents import Agent, Model, ScriptedModel, call, make_model, tool
from network import AgentNetworkError, Network, RunContext, Stop

QUESTION = "How are threads stored, and can I go back to an earlier point?"
REPOSITORIES = {
    "agent-network": {
        "docs/threads.md": "Threads persist to SQLite or PostgreSQL; a crash loses one call.",
        "docs/time-travel.md": "Fork a thread at a checkpoint, or rewind it in place.",
        "docs/agui.md": "Serve a network over AG-UI; threads live on the store.",
    },
    "elsewhere": {"README.md": "A calculator app: add, subtract, multiply."},
}
SEARCHES = 2


class Document(BaseModel):
    """A search hit: what the state key `documents` holds, typed."""

    path: str
    content: str
    score: int


def unique_sorted(current: list[str] | None, new: list[str]) -> list[str]:
    """Merge handler: the union of the paths seen so far, sorted (a set, kept as JSON)."""
    return sorted(set(current or []) | set(new))


STATE_SCHEMA = {
    "repository": {"type": str},
    "documents": {"type": list[Document]},  # a list type: merge_lists appends every search's hits
    "visited": {"type": list[str]},  # merged by the tool's mapping handler, unique_sorted
    "answer": {"type": str},
}


@tool(
    inputs_from_state={"repository": "repository"},
    outputs_to_state={
        "documents": {"source": "documents"},
        "visited": {"source": "paths", "handler": unique_sorted},
    },
)
def search_docs(
    query: Annotated[str, "a few words to look for"], repository: str
) -> dict[str, Any]:
    """Search the repository's files for the query's words."""
    files = REPOSITORIES.get(repository, {})
    words = {word.strip("?.,").lower() for word in query.split() if len(word) > 2}
    hits = []
    for path, content in files.items():
        score = sum(word in content.lower() or word in path for word in words)
        if score:
            hits.append({"path": path, "content": content, "score": score})
    hits.sort(key=lambda hit: -hit["score"])
    return {"documents": hits[:2], "paths": [hit["path"] for hit in hits[:2]]}


def _system(request: Any) -> str:
    return "".join(message.content or "" for message in request.system)


def _researcher(request: Any) -> Any:
    """Offline: the first search is about storage, the second about going back."""
    done = sum(1 for message in request.history if message.role == "tool")
    return call("search_docs", query="threads SQLite" if done == 0 else "fork checkpoint")


def _writer(request: Any) -> str:
    system = _system(request)
    found = [path for path in REPOSITORIES["agent-network"] if path in system]
    return f"From {len(found)} documents ({', '.join(found)}): threads persist; fork to go back."


def scripted_models() -> dict[str, ScriptedModel]:
    return {
        "researcher": ScriptedModel(_researcher, name="scripted-researcher"),
        "writer": ScriptedModel(_writer, name="scripted-writer"),
    }


def route(ctx: RunContext) -> Any:
    """The agent loop with an exit condition: search twice, then write once."""
    agents = ctx.network.agents
    last = ctx.last_result
    if last is not None and last.agent == "researcher" and not last.tool_calls:
        return Stop("researcher_no_tool_call", f"the researcher answered: {last.text!r}")
    searches = sum(1 for result in ctx.state.results if result.agent == "researcher")
    if searches < SEARCHES:
        return agents["researcher"]
    if last is not None and last.agent == "writer":
        return None
    return agents["writer"]


def build_network(model: str | Model | None = None) -> Network:
    """The research network, on `model` or the offline scripts."""
    scripted = scripted_models() if model is None else {}
    researcher = Agent(
        "researcher",
        description="Searches the repository with search_docs.",
        system="Search the documentation to answer the user's question. Seen: {visited?}",
        tools=[search_docs],
        tool_choice="search_docs",
        model=scripted.get("researcher", model),
    )
    writer = Agent(
        "writer",
        description="Answers from the documents found.",
        system="Answer the question in one sentence from these documents:\n{documents?}",
        model=scripted.get("writer", model),
        output_key="answer",
    )
    return Network(
        "research",
        agents=[researcher, writer],
        router=route,
        state_schema=STATE_SCHEMA,
        max_iter=SEARCHES + 2,
    )


network = build_network()


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
    parser.add_argument("--repository", default="agent-network", choices=sorted(REPOSITORIES))
    parser.add_argument("question", nargs="?", default=QUESTION)
    args = parser.parse_args(argv)
    model = (
        make_model(args.model, api_base=args.api_base, **dict(args.param)) if args.model else None
    )
    if args.model:
        print(f"Running on {args.model}.")
    else:
        print("Running offline on scripted models (pass --model provider/name for a real one).")
    _quiet_logs()
    team = build_network(model)
    parameters = search_docs.schema["function"]["parameters"]["properties"]
    print("The model sees search_docs parameters:", sorted(parameters))
    try:
        result = team.run_sync(args.question, state={"repository": args.repository})
    except AgentNetworkError as exc:
        print(f"error: the run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print("Agents called:", " -> ".join(r.agent for r in result.results))
    documents = result.get("documents") or []
    print("Documents:", len(documents), "| typed:", all(isinstance(d, Document) for d in documents))
    for document in documents:
        print(f"  {document.path} (score {document.score})")
    print("Visited:", result.get("visited"))
    print("Answer:", result.get("answer"))
    print("Stop reason:", result.stop_reason)
    return 0


def _quiet_logs() -> None:
    """An application decides what its logs show; this one only wants warnings."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


if __name__ == "__main__":
    sys.exit(main())
