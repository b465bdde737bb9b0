"""The README is a front page that tells the truth: its commands are what CI runs, its quickstart
runs as written, its links lead somewhere, and the recipes it points to in docs/ work as written.
"""

import os
import pathlib
import re
import subprocess
import sys

import httpx

from agents import Agent, ScriptedModel
from network import Network
from tests.network.agui.live import serve

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def page(name: str) -> str:
    """The text of one page of the manual (docs/NAME.md)."""
    return (ROOT / "docs" / f"{name}.md").read_text()


def test_readme_opens_with_the_two_commands_ci_uses() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None
    commands = first_block.group(1).strip().splitlines()
    assert commands == [
        "pip install -e . && python examples/codegen.py",
        "bash scripts/install-test-deps.sh"
        " && pip install -c constraints.txt -e '.[test]'"
        " && python -m pytest -n 4 --dist loadgroup -m 'not deadline'"
        " && python -m pytest -m deadline",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_quickstart_runs(capsys) -> None:
    section = README.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README quickstart", "exec"), {"__name__": "readme"})
    assert "{'hello.py': \"print('hi')\"} router_finished" in capsys.readouterr().out


def _quickstart_in_a_fresh_process(prelude: str = "") -> subprocess.CompletedProcess[str]:
    section = README.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=True,
    )


def test_the_quickstart_prints_only_its_own_output() -> None:
    run = _quickstart_in_a_fresh_process()
    assert run.stdout == "{'hello.py': \"print('hi')\"} router_finished\n"
    assert run.stderr == ""


def test_the_line_that_turns_logs_on_does() -> None:
    block = re.search(r"```python\n(import logging\n.*?)```", page("errors"), re.S).group(1)
    assert len(block.strip().splitlines()) <= 3  # the import, a blank line, the call
    run = _quickstart_in_a_fresh_process(block)
    assert run.stdout == "{'hello.py': \"print('hi')\"} router_finished\n"
    logged = run.stderr.splitlines()
    assert logged[0].startswith("INFO:agent_network:run.started run_id=run_")
    assert any("tool.called" in line and "tool=write_file" in line for line in logged)
    assert logged[-1].startswith("INFO:agent_network:run.finished")


def test_the_deps_and_resources_example_runs(capsys) -> None:
    section = page("deps").split("## In short", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README deps", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out == "ran 'make' in /tmp/job\n"


def test_the_agui_authorize_recipe_works_as_written() -> None:
    section = page("agui").split("## In short", 1)[1].split("\n## ", 1)[0]
    recipe = next(
        block for block in re.findall(r"```python\n(.*?)```", section, re.S) if "authorize" in block
    )
    scope = {"network": Network("n", agents=[Agent("a", model=ScriptedModel(lambda r: "ok"))])}
    exec(compile(recipe, "README authorize recipe", "exec"), scope)
    run = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "m", "role": "user", "content": "hi"}],
    }
    with serve(scope["asgi"]) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert http.post("/", json=run).status_code == 401
        alice = {"authorization": "Bearer token-of-alice"}
        bob = {"authorization": "Bearer token-of-bob"}
        assert http.post("/", json=run, headers=alice).status_code == 200
        assert http.post("/", json=run, headers=bob).status_code == 404


def test_quickstart_on_a_model_that_answers_in_text_stops_and_says_why(capsys) -> None:
    section = README.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    text_only = "ScriptedModel(lambda request: \"print('hi') would do it\")"
    code, replaced = re.subn(r"ScriptedModel\(\[.*?\]\)", text_only, code)
    assert replaced == 2
    exec(compile(code, "README quickstart", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines()[-1] == "None no_files"


def test_the_readme_is_a_front_page() -> None:
    """Short enough to read; the manual is docs/ (tests/test_docs.py runs its code)."""
    lines = README.splitlines()
    assert len(lines) <= 300
    first_screen = "\n".join(lines[:30])
    assert "](docs/index.md)" in first_screen  # the manual is one click from the top
    assert "Coming from another framework" in first_screen
    for heading in ("## Quickstart", "## Concepts", "## Performance", "## Where to go next"):
        assert heading in README, heading


def test_every_link_of_the_readme_leads_somewhere() -> None:
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", README, re.M)}
    for target in re.findall(r"\]\(([^)\s]+)\)", README):
        if "://" in target:
            continue
        path, _, fragment = target.partition("#")
        if not path:
            assert fragment in anchors, f"README links to a missing section #{fragment}"
            continue
        assert (ROOT / path).exists(), f"README links to {path}, which does not exist"
        if fragment and path.endswith(".md"):
            headings = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(), re.M)
            assert fragment in {_anchor(h) for h in headings}, f"{target}: no such section"


def test_every_concept_page_is_linked_from_the_concepts_section() -> None:
    concepts = README.split("## Concepts", 1)[1].split("\n## ", 1)[0]
    for name in ("runs", "agents", "routers", "tools", "state", "errors"):
        assert f"](docs/{name}.md)" in concepts, name


def _anchor(heading: str) -> str:
    """The id GitHub and mkdocs give a heading: lower case, punctuation dropped, dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_the_install_section_names_every_extra() -> None:
    """Each feature that needs an extra says so on the front page (`a2a` and `memory` were
    only in their own pages); `test` is the second command's."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    shown = set(re.findall(r"pip install -e '\.\[(\w+)\]'", install))
    assert shown == set(extras) - {"test"}
