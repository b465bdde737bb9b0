"""`KV`, the run's store: `kv.view` reads a large value without copying it, and without a way to
change it; the change cursor hands out each write once."""

import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, State, merge_dicts
from network.state.kv import KV


def test_a_view_is_read_only_and_shows_appends_and_merges() -> None:
    state = State(schema={"items": {"type": list[str]}, "files": {"type": dict[str, str]}})
    kv = state.kv
    kv.set("items", ["a", "b"])
    kv.set("files", {"a.py": "1"}, merge_dicts)
    items, files = kv.view("items"), kv.view("files")
    assert items == ["a", "b"] and len(items) == 2 and "a" in items and items[-1] == "b"
    assert files == {"a.py": "1"} and "a.py" in files
    with pytest.raises(AttributeError):
        items.append("c")  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        items[0] = "z"  # type: ignore[index]
    with pytest.raises(TypeError):
        files["b.py"] = "2"  # type: ignore[index]
    kv.set("items", "c")
    kv.set("files", {"b.py": "2"}, merge_dicts)
    assert list(items) == ["a", "b", "c"] and dict(files) == {"a.py": "1", "b.py": "2"}
    assert kv.get("items") == ["a", "b", "c"]  # the store never changed behind its back
    assert kv.view("missing", "none") == "none"
    sliced = items[:1]
    sliced.append("mine")  # a slice is a copy, the caller's own
    assert kv.get("items") == ["a", "b", "c"]


@pytest.mark.anyio
async def test_a_router_and_a_tool_read_through_views() -> None:
    seen: list[list[str]] = []

    @tool
    def note(text: str, ctx: ToolContext) -> str:
        ctx.kv.set("notes", text)
        seen.append(list(ctx.kv.view("notes")))  # the tool sees its own write
        return "ok"

    agent = Agent(
        "a", tools=[note], model=ScriptedModel([call("note", text=str(i)) for i in range(3)])
    )

    def until_three(ctx):
        notes = ctx.kv.view("notes", ())
        return None if len(notes) >= 3 else agent

    result = await Network(
        "n", agents=[agent], router=until_three, state_schema={"notes": {"type": list[str]}}
    ).run("x")
    assert result["notes"] == ["0", "1", "2"]
    assert seen == [["0"], ["0", "1"], ["0", "1", "2"]]


def test_a_staged_view_sees_the_tool_s_own_writes_only() -> None:
    state = State({"notes": ["a"]}, schema={"notes": {"type": list[str]}})
    staged = state.for_tool().kv
    staged.set("notes", "b")
    assert list(staged.view("notes")) == ["a", "b"]
    assert list(state.kv.view("notes")) == ["a"]


def test_the_store_hands_out_unpublished_ops_once_and_keeps_them_for_take_ops() -> None:
    kv = KV()
    kv.set("a", 1)
    first = kv.unpublished_ops()
    assert first == [{"op": "add", "path": "/a", "value": 1}]
    assert kv.unpublished_ops() == []  # shown already
    kv.set("b", 2)
    assert kv.unpublished_ops() == [{"op": "add", "path": "/b", "value": 2}]
    assert len(kv.take_ops()) == 2  # showing a change does not take it off the result
    kv.set("c", 3)
    assert kv.unpublished_ops() == [{"op": "add", "path": "/c", "value": 3}]


def test_a_rollback_of_shown_ops_hands_out_the_ops_that_take_them_back() -> None:
    kv = KV()
    kv.set("a", 1)
    kv.set("gone", True)
    kv.take_ops()
    mark = kv.savepoint()
    kv.set("a", 2)
    kv.set("b", [1])
    kv.delete("gone")
    assert len(kv.unpublished_ops()) == 3  # a stream showed them
    kv.set("c", 3)  # never shown
    kv.rollback(mark)
    assert kv.data == {"a": 1, "gone": True}
    assert kv.unpublished_ops() == [
        {"op": "add", "path": "/a", "value": 1},
        {"op": "remove", "path": "/b"},
        {"op": "add", "path": "/gone", "value": True},
    ]
    assert kv.take_ops() == []  # the record holds neither the undone ops nor the take-back
    assert not kv.has_unpublished_ops()


def test_a_key_made_and_removed_while_shown_is_not_removed_again() -> None:
    kv = KV()
    mark = kv.savepoint()
    kv.set("tmp", 1)
    kv.delete("tmp")
    kv.unpublished_ops()
    kv.rollback(mark)
    assert kv.unpublished_ops() == []  # the shown copy does not hold `tmp` either
    kv.set("z", 1)
    assert kv.unpublished_ops() == [{"op": "add", "path": "/z", "value": 1}]


def test_get_has_delete_and_data_answer_as_agentkit_s_kv_does() -> None:
    kv = State().kv
    assert kv.get("missing") is None and kv.get("missing", 0) == 0 and not kv.has("missing")
    kv.set("plan", ["a"])
    assert kv.has("plan") and "plan" in kv and kv.get("plan") == ["a"]
    everything = kv.data  # AgentKit's `kv.all()`, as a snapshot
    everything["plan"].append("b")
    assert kv.get("plan") == ["a"]
    assert kv.delete("plan") is True
    assert kv.delete("plan") is False  # as Map.delete: whether it held a value
    assert kv.data == {}


def test_a_key_reads_by_subscript_as_the_docs_write_it() -> None:
    # docs/mcp.md's `state.kv["files"]`: a TypeError, 'KV' object is not subscriptable
    state = State({"files": {"a.py": "1"}})
    files = state.kv["files"]
    assert files == {"a.py": "1"}
    files["b.py"] = "2"  # a copy, as get's
    assert state.kv["files"] == {"a.py": "1"}
    with pytest.raises(KeyError, match="'nope'"):
        state.kv["nope"]
    assert dict(state.kv) == {"files": {"a.py": "1"}}


def test_item_assignment_and_deletion_are_refused_as_the_adk_page_says() -> None:
    # docs/coming-from-adk.md: ADK's `tool_context.state["k"] = v` is `kv.set`, whose merge
    # handler `=` would hide; `del state["k"]` / `pop` is `kv.delete`. Both refused, unchanged.
    state = State({"docs": ["a"]}, schema={"docs": {"type": list[str]}})
    with pytest.raises(TypeError):
        state.kv["docs"] = ["b"]  # type: ignore[index]
    with pytest.raises(TypeError):
        del state.kv["docs"]  # type: ignore[attr-defined]
    assert state.kv.data == {"docs": ["a"]}
    state.kv.set("docs", ["b"])
    assert state.kv.get("docs") == ["a", "b"]  # what `=` would have hidden: an append


@pytest.mark.anyio
async def test_a_tool_reads_a_key_by_subscript_with_its_own_writes() -> None:
    @tool
    def add(ctx: ToolContext) -> str:
        """Add a file."""
        ctx.kv.set("files", {"b.py": "2"}, merge_dicts)
        return ",".join(sorted(ctx.kv["files"]))

    @tool
    async def wait() -> str:
        """Wait a moment."""
        return "waited"

    # two calls in one answer: each tool reads through its own staged view of the store
    model = ScriptedModel([[call("add"), call("wait")], "done"])
    agent = Agent("a", tools=[add, wait], model=model)
    network = Network("n", agents=[agent], router=lambda c: agent if c.call_count < 2 else None)
    result = await network.run("go", state={"files": {"a.py": "1"}})
    assert result.results[0].tool_calls[0].content == "a.py,b.py"
