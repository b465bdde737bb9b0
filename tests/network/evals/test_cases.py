"""Datasets in YAML and JSON: written so they diff case by case, read back the same, and
refused by file, case and field when wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from network.evals import Case, CaseLimits, Dataset, DatasetError, ExpectedToolCall


def sample() -> Dataset:
    return Dataset(
        name="codegen",
        cases=[
            Case(
                name="add",
                input="Write add(a, b).",
                expected_output="Approved.",
                expected_state={"plan": "1. add.py"},
                expected_tools=[ExpectedToolCall(name="save"), ExpectedToolCall(name="review")],
                limits=CaseLimits(max_model_calls=10, timeout_s=5),
            ),
            Case(name="sub", input="Write sub(a, b).", expected_output="Approved."),
        ],
    )


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_dataset_round_trips_and_one_changed_case_is_a_small_diff(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"codegen{suffix}"
    sample().save(path)
    assert Dataset.load(path) == sample()
    before = path.read_text().splitlines()
    changed = sample()
    changed.cases[1].expected_output = "Rejected."
    changed.save(path)
    after = path.read_text().splitlines()
    assert len(before) == len(after)
    assert sum(1 for old, new in zip(before, after, strict=True) if old != new) == 1


@pytest.mark.parametrize("text", ["caf\u00e9\u0085menu", "\u0085", "x" * 150 + "\u0085y"])
def test_a_next_line_character_survives_a_yaml_round_trip(tmp_path: Path, text: str) -> None:
    # Before, PyYAML wrote U+0085 (NEL, which copy-pasted text carries) raw in a quoted
    # scalar and read it back folded into a space: the saved case asked another question.
    dataset = Dataset(
        name="d",
        cases=[Case(name="nel", input=text, expected_output=text, expected_state={"k": text})],
    )
    dataset.save(tmp_path / "d.yaml")
    assert Dataset.load(tmp_path / "d.yaml") == dataset
    # a dataset without one keeps its letters as they are written
    Dataset(name="d", cases=[Case(name="café", input="déjà vu")]).save(tmp_path / "fr.yaml")
    assert "déjà vu" in (tmp_path / "fr.yaml").read_text(encoding="utf-8")


def test_yaml_is_read_as_people_write_it(tmp_path: Path) -> None:
    path = tmp_path / "d.yml"
    path.write_text(
        "name: codegen\ncases:\n- name: add\n  input: hi\n  expected_tools: [save, review]\n"
        "  limits: {max_agent_calls: 5}\n"
    )
    [case] = Dataset.load(path).cases
    assert [tool.name for tool in case.expected_tools or []] == ["save", "review"]
    assert case.limits is not None and case.limits.max_agent_calls == 5


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("name: d\ncases:\n- {name: a, input: x, expected: 1}\n", "case 'a', field expected"),
        (
            "name: d\ncases:\n- {name: a, input: x}\n- {name: a, input: y}\n",
            "two cases are named 'a'",
        ),
        (
            "name: d\ncases:\n- {name: a, input: x, limits: {max_model_calls: -1}}\n",
            "case 'a', field limits.max_model_calls",
        ),
        ("name: d\ncases:\n- {name: a, input: x, limits: {timeout_s: .nan}}\n", "nan"),
        ("name: d\ncases:\n- {name: a, input: x, limits: {max_cost_usd: .inf}}\n", "inf"),
        # YAML's yes is a bool, which was taken as a limit of 1
        (
            "name: d\ncases:\n- {name: a, input: x, limits: {max_model_calls: yes}}\n",
            "case 'a', field limits.max_model_calls: Value error, a limit is a number, not true",
        ),
        # an empty dataset passed every evaluation (0 of 0), a CI gate that checked nothing
        ("name: d\ncases: []\n", "cases: Value error, a dataset holds at least one case"),
        ("name: d\ncases: [\n", "not valid YAML"),
        ("- 1\n", "the file"),
    ],
)
def test_a_bad_dataset_is_refused_naming_the_file_case_and_field(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(DatasetError, match="bad.yaml") as caught:
        Dataset.load(path)
    assert said in str(caught.value)


def test_json_refuses_nan_and_other_suffixes_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"name": "d", "cases": [{"name": "a", "input": "x", "expected_output": NaN}]}')
    with pytest.raises(DatasetError, match="not valid JSON"):
        Dataset.load(path)
    with pytest.raises(DatasetError, match=r"\.yaml, \.yml or \.json"):
        Dataset.load(tmp_path / "d.txt")
    with pytest.raises(DatasetError, match="cannot read"):
        Dataset.load(tmp_path / "missing.json")


_LAUGHS = "".join(
    f"    l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]\n" for level in range(1, 9)
)


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        # each was a traceback: UnicodeDecodeError, then RecursionError in the parsers
        ("latin.yaml", b"name: d\xe9\n", "not UTF-8 text (byte 7)"),
        ("deep.json", b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper"),
        ("deep.yaml", b"x: " + b"[" * 5_000 + b"]" * 5_000 + b"\n", "nested deeper"),
        # each was loaded, then every run of the case failed on it (MessageError)
        (
            "lone.json",
            b'{"name": "d", "cases": [{"name": "a", "input": "hi \\ud800"}]}',
            "case 'a', field input: Value error, the run's input holds a lone surrogate",
        ),
        (
            "nul.json",
            b'{"name": "d", "cases": [{"name": "b", "input": "hi \\u0000"}]}',
            "case 'b', field input: Value error, the run's input holds a NUL character",
        ),
        # ten lines of aliases: 43 million values, which validation walked for 18 s
        (
            "laughs.yaml",
            (
                "name: d\ncases:\n- name: a\n  input: x\n  expected_state:\n"
                '    l0: &l0 ["lol"]\n' + _LAUGHS
            ).encode(),
            "holds more than 1,000,000 values",
        ),
    ],
)
def test_a_hostile_file_is_a_dataset_error_not_a_traceback(
    tmp_path: Path, name: str, content: bytes, said: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DatasetError, match=name) as caught:
        Dataset.load(path)
    assert said in str(caught.value)


def test_case_limits_become_the_runs_usage_limits() -> None:
    limits = CaseLimits(max_model_calls=3, max_cost_usd=0.5, timeout_s=2)
    usage = limits.usage_limits()
    assert usage is not None and (usage.max_model_calls, usage.max_cost_usd) == (3, 0.5)
    assert CaseLimits(timeout_s=1).usage_limits() is None
