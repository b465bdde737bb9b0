"""`agent-network eval`: a dataset file scored by the command line, saved, and compared with
a report saved before a change, through `main()` (test_main.py drives the entry point as a
process)."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from network.evals import Case, Dataset
from tests.network.capabilities.replay.teams import TASK
from tests.network.cli.test_main import cli_main as cli

NETWORKS = "tests/network/cli/replay_networks.py"


def dataset(path: Path) -> str:
    file = path / "codegen.yaml"
    Dataset(
        name="codegen",
        cases=[
            Case(name="add", input=TASK, expected_output="Approved.", expected_tools=["save"]),
            Case(name="plan", input=TASK, expected_state={"plan": "1. add.py\n2. test_add.py"}),
        ],
    ).save(file)
    return str(file)


def test_eval_prints_the_table_saves_json_and_exits_0_when_all_pass(tmp_path: Path) -> None:
    out = tmp_path / "before.json"
    done = cli("eval", f"{NETWORKS}:network", dataset(tmp_path), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "codegen on codegen: 2 of 2 passed" in done.stdout
    saved = json.loads(out.read_text())
    assert saved["passed"] == 2 and [c["name"] for c in saved["cases"]] == ["add", "plan"]


def test_a_case_that_breaks_is_named_against_the_report_before(tmp_path: Path) -> None:
    file = dataset(tmp_path)
    before = tmp_path / "before.json"
    assert cli("eval", f"{NETWORKS}:network", file, "--out", str(before)).returncode == 0
    broken = tmp_path / "broken.yaml"
    broken.write_text(Path(file).read_text().replace("Approved.", "Rejected."))
    done = cli("eval", f"{NETWORKS}:network", str(broken), "--against", str(before), "--json")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["comparison"]["broke"] == ["add"] and data["passed"] == 1


def test_a_bad_dataset_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: d\ncases:\n- {name: a}\n")
    done = cli("eval", f"{NETWORKS}:network", str(bad))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: dataset") and "case 'a', field input" in line


def test_an_out_file_that_cannot_be_written_is_refused_before_any_case_runs(
    tmp_path: Path,
) -> None:
    """The cases ran (spending on the model), then saving the report was a traceback."""
    file = dataset(tmp_path)
    for out, said in (
        (tmp_path / "no" / "dir" / "r.json", f"error: --out: no such directory: {tmp_path}/no/dir"),
        (tmp_path, f"error: --out: {tmp_path} is a directory"),
    ):
        done = cli("eval", f"{NETWORKS}:network", file, "--out", str(out))
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(said), line
        assert done.stdout == ""  # refused before the cases: no report


def test_a_report_that_fails_to_save_is_printed_then_one_line(tmp_path: Path) -> None:
    file = dataset(tmp_path)
    full = OSError(28, "No space left on device")
    with mock.patch.object(Path, "write_text", side_effect=full):
        done = cli("eval", f"{NETWORKS}:network", file, "--out", str(tmp_path / "r.json"))
    assert done.returncode == 2
    assert "codegen on codegen: 2 of 2 passed" in done.stdout  # the cases' outcome is kept
    assert done.stderr == "error: --out: cannot save the report: No space left on device\n"
