"""Small offline networks for the streaming and AG-UI tests (ScriptedModel, streamed chunks)."""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, Tool, call, tool
from network import Network, RunContext, merge_dicts

CODEGEN_SCHEMA = {
    "plan": {"type": str},
    "files": {"type": dict[str, str], "handler": merge_dicts},
    "review": {"type": dict[str, Any]},
    "topic": {"type": str},
    "user:language": {"type": str},
}


@tool(outputs_to_state={"files": {"source": "files", "handler": merge_dicts}})
def write_files(files: dict[str, str]) -> dict[str, Any]:
    """Write source files."""
    return {"files": files, "written": sorted(files)}


@tool(outputs_to_state={"review": {}})
def review(approved: bool, comments: str = "") -> dict[str, Any]:
    """Approve the files or send them back."""
    return {"approved": approved, "comments": comments}


def codegen_route(ctx: RunContext) -> Any:
    kv = ctx.kv
    agents = ctx.network.agents
    last = ctx.last_result.agent if ctx.last_result else None
    if not kv.has("plan"):
        return agents["planner"]
    if last == "coder":
        return agents["reviewer"]
    verdict = kv.get("review")
    if verdict and verdict.get("approved"):
        return None
    return agents["coder"]


def codegen_network(
    chunk_size: int = 5, *, write_tool: Tool = write_files, router: Any = codegen_route
) -> Network:
    """Planner (text, output_key), coder (write_files, merged), reviewer (one rejection).

    `write_tool` and `router` replace the coder's tool and the router (the dev UI's tests
    gate the tool and end the run with a summary).
    """

    def coder(request: Any) -> Any:
        system = "".join(m.content for m in request.system)
        if "add a test" in system:
            return call("write_files", files={"tests/test_add.py": "assert add(2, 3) == 5\n"})
        return call("write_files", files={"calc/add.py": "def add(a, b):\n    return a + b\n"})

    def reviewer(request: Any) -> Any:
        system = "".join(m.content for m in request.system)
        if "tests/test_add.py" in system:
            return call("review", approved=True, comments="Looks good.")
        return call("review", approved=False, comments="Please add a test.")

    planner = Agent(
        "planner",
        system="Plan the task.",
        model=ScriptedModel(
            lambda r: "1. calc/add.py\n2. tests/test_add.py", chunk_size=chunk_size
        ),
        output_key="plan",
    )
    coder_agent = Agent(
        "coder",
        system="Follow the plan: {plan}\nReview: {review?}",
        tools=[write_tool],
        model=ScriptedModel(coder, chunk_size=chunk_size),
    )
    reviewer_agent = Agent(
        "reviewer",
        system="Review {files}",
        tools=[review],
        model=ScriptedModel(reviewer, chunk_size=chunk_size),
    )
    return Network(
        "codegen",
        agents=[planner, coder_agent, reviewer_agent],
        router=router,
        state_schema=CODEGEN_SCHEMA,
        max_iter=12,
    )


RECIPE_SCHEMA = {"recipe": {"type": dict[str, Any]}, "servings": {"type": int}}
PREDICT = {"recipe": {"tool": "create_recipe", "tool_argument": "recipe_data"}}
PANCAKES = {"title": "Pancakes", "steps": ["mix the batter", "fry"], "minutes": 20}


def chef_script(request: Any) -> Any:
    """Proposes the pancakes; after a tool result (saved or rejected), answers in text."""
    if request.history and request.history[-1].role == "tool":
        return "Enjoy!"
    return call("create_recipe", recipe_data=PANCAKES)


def recipe_network(
    *, confirm: bool = False, model: Any = None, schema: Any = None, calls: list[Any] | None = None
) -> Network:
    """A chef whose `create_recipe(recipe_data)` predicts state key `recipe`."""

    @tool(requires_confirmation=confirm)
    def create_recipe(recipe_data: dict[str, Any]) -> str:
        """Save the recipe."""
        if calls is not None:
            calls.append(recipe_data.get("title"))
        return f"saved {recipe_data.get('title')}"

    def route(ctx: RunContext) -> Any:
        last = ctx.last_result
        if last is None or (last.tool_calls and ctx.call_count < 4):
            return ctx.network.agents["chef"]
        return None

    chef = Agent(
        "chef",
        system="You write recipes.",
        tools=[create_recipe],
        model=model if model is not None else ScriptedModel(chef_script, chunk_size=7),
    )
    return Network(
        "recipes",
        agents=[chef],
        router=route,
        state_schema=schema or RECIPE_SCHEMA,
        predict_state=PREDICT,
    )


def booking_script(request: Any) -> Any:
    """Asks the client's `confirm_booking` tool; once its result is in, answers with it."""
    last = request.history[-1] if request.history else None
    if last is not None and last.role == "tool":
        return f"Booked: {last.content}"
    return call("confirm_booking", date="2026-12-24", guests=2)


def booking_network(model: Any) -> Network:
    """A concierge whose instructions take the client's context; its tools are the client's."""
    concierge = Agent("concierge", system="You book rooms.\nContext:\n{temp:context?}", model=model)
    return Network("booking", agents=[concierge])


def pantry_kitchen(saved: list[str]) -> tuple[Network, ScriptedModel]:
    """A chef whose `pantry` tool is an agent that checks the shelf, then saves the recipe:
    each of its two tools waits for a person's approval."""

    @tool(requires_confirmation=True)
    def check_shelf(item: str) -> str:
        """Check that an item is on the shelf."""
        return f"{item} is there"

    @tool(requires_confirmation=True)
    def save_recipe(title: str) -> str:
        """Save a recipe."""
        saved.append(title)
        return f"saved {title}"

    def keeper_script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "user":
            return call("check_shelf", item="flour")
        if last.name == "check_shelf":
            return call("save_recipe", title="Pancakes")
        return f"pantry: {last.content}"

    keeper = Agent(
        "keeper",
        description="Keeps the pantry.",
        tools=[check_shelf, save_recipe],
        model=ScriptedModel(keeper_script),
    )

    def script(request: Any) -> Any:
        last = request.history[-1]
        if last.role == "tool":
            return f"done: {last.content}"
        if last.content == "pancakes":
            return call("keeper", input="pancakes")
        return f"noted: {last.content}"

    model = ScriptedModel(script)
    chef = Agent("chef", model=model, tools=[keeper.as_tool()])

    def route(ctx: Any) -> Any:
        last = ctx.last_result
        return chef if last is None or last.tool_calls else None

    return Network("kitchen", agents=[chef], router=route), model


def notes_network(seen: list[Any] | None = None) -> Network:
    """An agent that answers with how many user messages it was sent, saving its answer."""

    def answer(request: Any) -> str:
        if seen is not None:
            seen.append(request)
        users = [m.content for m in request.history if m.role == "user"]
        return f"heard {len(users)}: {' | '.join(users)}"

    agent = Agent("scribe", model=ScriptedModel(answer), output_key="app:last_answer")
    return Network(
        "notes",
        agents=[agent],
        state_schema={
            "topic": {"type": str},
            "user:language": {"type": str},
            "app:last_answer": {"type": str},
        },
    )
