"""Networks for the command-line tests: offline, on scripted models.

Loaded by path (`agent-network run tests/network/cli/example_network.py:network ...`).
"""

from typing import Any

from agents import Agent, ScriptedModel, call, tool
from network import Network, merge_dicts


@tool(outputs_to_state={"files": {"source": "files", "handler": merge_dicts}})
def write_files(files: dict[str, str]) -> dict[str, Any]:
    """Write source files."""
    return {"files": files}


def make_network() -> Network:
    """A planner and a coder, one call each."""
    planner = Agent(
        "planner",
        model=ScriptedModel(lambda r: "Plan: write add.py", chunk_size=6),
        output_key="plan",
    )
    coder = Agent(
        "coder",
        tools=[write_files],
        model=ScriptedModel(lambda r: call("write_files", files={"add.py": "def add(a, b): ..."})),
    )
    order = ["planner", "coder"]

    def route(ctx: Any) -> Any:
        return order[ctx.call_count] if ctx.call_count < len(order) else None

    return Network(
        "tiny", agents=[planner, coder], router=route, state_schema={"files": {"type": dict}}
    )


network = make_network()

solo = Network("solo", agents=[Agent("solo", model=ScriptedModel(lambda r: "scripted answer"))])

broken = Network(
    "broken", agents=[Agent("broken", model=ScriptedModel([RuntimeError("provider down")]))]
)

not_a_network = 42


def needs_arguments(name: str) -> Network:
    return network


async def built_asynchronously() -> Network:
    """A coroutine function: the command has no event loop to await it in."""
    return network


def fails_with_type_error() -> Network:
    """Takes no arguments; its body fails (a bug of the file's, not of how it is called)."""
    raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")


def routed() -> Network:
    """A planner chosen by a routing agent, which then says it is done."""
    from routers import routing_agent

    router = routing_agent(
        ScriptedModel(
            [
                call("select_agent", name="planner", reason="a plan comes first"),
                call("done", summary="Planned the work."),
            ]
        )
    )
    planner = Agent("planner", model=ScriptedModel(["Plan: write add.py"]))
    return Network("routed", agents=[planner], router=router)


def remote() -> Network:
    """An agent on its own OpenAI-compatible server (`EXAMPLE_API_BASE`), with its own key."""
    import os

    from agents import LiteLLMModel

    model = LiteLLMModel(
        "openai/own-model",
        api_base=os.environ.get("EXAMPLE_API_BASE", "http://127.0.0.1:9/v1"),
        api_key="key-from-the-file",
        max_retries=0,
        temperature=0.5,
    )
    return Network("remote", agents=[Agent("remote", model=model)])


@tool
def fetch_page(url: str) -> str:
    """Fetch a page: one that drives a terminal, and a file name that is not UTF-8."""
    return "page \x1b[2J\x1b]0;owned\x1b\\ \x9b31m name-\udcff"


def hostile() -> Network:
    """A tool result and a model answer holding escape sequences, a right-to-left override
    and a lone surrogate."""
    reader = Agent(
        "reader",
        tools=[fetch_page],
        model=ScriptedModel([call("fetch_page", url="x"), "done\x1b[K \u202eevil\udcff\nnext"]),
    )

    def route(ctx: Any) -> Any:
        return reader if ctx.call_count < 2 else None

    return Network("hostile", agents=[reader], router=route)
