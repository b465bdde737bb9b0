"""The README's quickstart runs as written and its commands are what CI runs."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_opens_with_the_two_commands_ci_uses() -> None:
    first_block = re.search(r"```bash\n(.*?)```", README, re.S)
    assert first_block is not None
    commands = first_block.group(1).strip().splitlines()
    assert commands == [
        "pip install -e . && python examples/codegen.py",
        "bash scripts/install-test-deps.sh && pip install -e '.[test]' && python -m pytest",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_quickstart_runs(capsys) -> None:
    section = README.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README quickstart", "exec"), {"__name__": "readme"})
    assert "{'hello.py': \"print('hi')\"} router_finished" in capsys.readouterr().out
