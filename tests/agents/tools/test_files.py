"""The checked file writer: code generation writes only inside its output folder.

Real temporary folders and real symlinks; a scripted model naming hostile paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, FileWriteError, ScriptedModel, call, files_to_disk, write_files_tool
from network import ConfigurationError, Network, State

ESCAPES = ["../../x.py", "/abs/x.py", "a/../../x.py", "..", "a/../.."]
BAD = [
    *ESCAPES,
    "",
    "   ",
    "a\x00b.py",
    "a\nb.py",
    "a\\..\\x.py",
    "C:/x.py",
    "pkg/",
    ".",
    "a/..",
    "x" * 300,
]


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    """(the output folder, a folder outside it that must stay untouched)."""
    out = tmp_path / "deep" / "out"
    out.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    return out, outside


def everything_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", BAD, ids=repr)
def test_paths_that_leave_the_folder_or_cannot_be_names_are_refused(
    sandbox: tuple[Path, Path], name: str
) -> None:
    out, _ = sandbox
    before = everything_under(out.parent.parent)
    with pytest.raises(FileWriteError) as raised:
        files_to_disk({name: "x", "ok.py": "fine"}, out)
    assert name in raised.value.refused
    assert repr(name) in str(raised.value)
    assert everything_under(out.parent.parent) == before  # nothing at all was written


@pytest.mark.parametrize("name", [".git/config", "src/.git/hooks/pre-commit", ".GIT/config"])
def test_a_path_into_a_repositorys_own_folder_is_refused(
    sandbox: tuple[Path, Path], name: str
) -> None:
    # before, a model could write .git/config (core.fsmonitor names a command git runs on the
    # next `git status`) into an output folder that is a repository
    out, _ = sandbox
    with pytest.raises(FileWriteError) as raised:
        files_to_disk({name: "[core]\n\tfsmonitor = touch /tmp/owned\n", ".gitignore": "x"}, out)
    assert ".git, a repository's own folder" in raised.value.refused[name]
    assert everything_under(out) == set()


def test_a_symlink_inside_the_folder_is_never_followed(sandbox: tuple[Path, Path]) -> None:
    out, outside = sandbox
    (out / "link").symlink_to(outside, target_is_directory=True)
    (out / "file_link.py").symlink_to(outside / "target.py")
    for name in ["link/x.py", "link/sub/x.py", "file_link.py"]:
        with pytest.raises(FileWriteError, match="symlink"):
            files_to_disk({name: "owned"}, out)
    assert list(outside.iterdir()) == []


def test_a_name_cannot_be_both_a_file_and_a_folder(sandbox: tuple[Path, Path]) -> None:
    out, _ = sandbox
    with pytest.raises(FileWriteError, match="both a file and a folder"):
        files_to_disk({"pkg": "x", "pkg/mod.py": "y"}, out)
    files_to_disk({"pkg/mod.py": "y"}, out)
    with pytest.raises(FileWriteError, match="cannot be a folder"):
        files_to_disk({"pkg/mod.py/inner.py": "z"}, out)
    with pytest.raises(FileWriteError, match="not a regular file"):
        files_to_disk({"pkg": "z"}, out)


def test_limits_on_count_and_size(sandbox: tuple[Path, Path]) -> None:
    out, _ = sandbox
    with pytest.raises(FileWriteError, match="3 files in all, over the limit of 2"):
        files_to_disk({"a": "1", "b": "2", "c": "3"}, out, max_files=2)
    with pytest.raises(FileWriteError, match="over 4"):
        files_to_disk({"a": "12345"}, out, max_bytes=4)
    with pytest.raises(FileWriteError, match="over the limit of 5"):
        files_to_disk({"a": "123", "b": "456"}, out, max_total_bytes=5)
    assert everything_under(out) == set()


def test_good_paths_are_normalized_and_written_atomically(sandbox: tuple[Path, Path]) -> None:
    out, _ = sandbox
    (out / "calc").mkdir()
    (out / "calc" / "add.py").write_text("old")
    written = files_to_disk({"./calc//add.py": "new", "calc/x/../__init__.py": ""}, out)
    assert written == ["calc/__init__.py", "calc/add.py"]
    assert (out / "calc" / "add.py").read_text() == "new"
    assert everything_under(out) == {"calc", "calc/add.py", "calc/__init__.py"}  # no temp files


def test_files_to_disk_takes_a_state(sandbox: tuple[Path, Path]) -> None:
    out, _ = sandbox
    state = State(data={"files": {"a.py": "1"}, "code": {"b.py": "2"}})
    assert files_to_disk(state, out) == ["a.py"]
    assert files_to_disk(state, out, key="code") == ["b.py"]


def coder_network(model: ScriptedModel, write_files: Any, steps: int = 4) -> Network:
    agent = Agent("coder", tools=[write_files], model=model)

    def route(ctx: Any) -> Any:  # until the model answers in text or its script runs out
        done = ctx.last_result is not None and not ctx.last_result.tool_calls
        return None if done or ctx.call_count >= steps else agent

    return Network("codegen", agents=[agent], router=route)


@pytest.mark.anyio
async def test_the_model_is_told_which_paths_were_refused_and_the_run_goes_on(
    sandbox: tuple[Path, Path],
) -> None:
    out, outside = sandbox
    (out / "link").symlink_to(outside, target_is_directory=True)
    model = ScriptedModel(
        [
            call("write_files", files={"../../escape.py": "x", "ok.py": "fine"}),
            call("write_files", files={"link/owned.py": "x", "/etc/evil": "x"}),
            call("write_files", files={"ok.py": "fine", "pkg/mod.py": "m"}),
            "done",
        ]
    )
    result = await coder_network(model, write_files_tool(out)).run("write code")
    first, second, third = (r.tool_calls[0] for r in result.results[:3])
    assert first.is_error and "'../../escape.py'" in first.content
    assert second.is_error and "'link/owned.py'" in second.content and "symlink" in second.content
    assert "'/etc/evil'" in second.content and "absolute" in second.content
    told = [m for m in model.requests[1].history if m.role == "tool"]
    assert told[-1].is_error and "'../../escape.py'" in str(told[-1].content)
    assert not third.is_error and third.result == {"written": ["ok.py", "pkg/mod.py"]}
    assert result.output == "done"
    assert list(outside.iterdir()) == []
    assert not (out.parent.parent / "escape.py").exists()
    assert everything_under(out) == {"link", "ok.py", "pkg", "pkg/mod.py"}
    assert result.state.kv.get("files") == {"ok.py": "fine", "pkg/mod.py": "m"}


@pytest.mark.anyio
async def test_the_tool_counts_the_runs_files_against_its_limits(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            call("write_files", files={"a.py": "1", "b.py": "2"}),
            call("write_files", files={"c.py": "3"}),
            call("write_files", files={"a": "a third file"}),
            call("write_files", files={"a.py/x": "file as folder"}),
        ]
    )
    tool = write_files_tool(tmp_path, max_files=2)
    result = await coder_network(model, tool).run("x")
    records = [r.tool_calls[0] for r in result.results]
    assert not records[0].is_error
    assert records[1].is_error and "3 files in all, over the limit of 2" in records[1].content
    assert records[2].is_error and "over the limit of 2" in records[2].content
    assert records[3].is_error and "both a file and a folder" in records[3].content
    assert sorted(os.listdir(tmp_path)) == ["a.py", "b.py"]


@pytest.mark.anyio
async def test_without_a_folder_files_are_checked_and_kept_in_state() -> None:
    model = ScriptedModel([call("write_files", files={"../x": "1", "a.py": "2"}), "ok"])
    result = await coder_network(model, write_files_tool(None), steps=2).run("x")
    assert result.results[0].tool_calls[0].is_error
    assert not result.state.kv.has("files")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"folder": 5}, "folder must be a path or None, got int"),
        ({"folder": None, "max_files": 0}, "max_files must be an int >= 1, got 0"),
        ({"folder": None, "max_bytes": float("nan")}, "max_bytes must be an int >= 1, got nan"),
        ({"folder": None, "state_key": 5}, "state_key must be a state key"),
        ({"folder": None, "state_key": ""}, "state_key must be a state key"),
    ],
)
def test_write_files_tool_refuses_bad_options_where_it_is_defined(
    options: dict[str, Any], named: str
) -> None:
    """A bad limit was a bare ValueError, a non-path folder a TypeError from pathlib, and a
    state key of 5 was taken and failed every call of the run; each is now a
    ConfigurationError naming the tool and the option."""
    with pytest.raises(ConfigurationError, match=rf"write_files_tool 'write_files': {named}"):
        write_files_tool(**options)
