"""The test environment is locked, the package is not: constraints.txt pins every dependency
`.[test]` asks for, within the ranges pyproject.toml declares, and CI installs with it."""

from __future__ import annotations

import pathlib
import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = pathlib.Path(__file__).resolve().parent.parent


def pins() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.strip().split("==")
            found[canonicalize_name(name)] = version
    return found


def requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [Requirement(text) for text in listed]


def test_every_dependency_of_the_test_environment_is_pinned_within_its_range() -> None:
    locked = pins()
    for requirement in requirements():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in constraints.txt: refresh the lock"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"constraints.txt pins {name}=={locked[name]}, outside {requirement}"
        )
    for name in ("litellm", "pydantic", "dbos", "mcp"):
        assert name in locked


def test_the_package_itself_stays_unpinned() -> None:
    for requirement in requirements():
        assert not any(spec.operator == "==" for spec in requirement.specifier) or (
            requirement.name in ("ruff", "mypy")  # the linters' verdicts must not move
        ), f"pyproject.toml pins {requirement}: pin in constraints.txt instead"


def test_ci_and_the_readme_install_the_lock() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    installs = re.findall(r"pip install[^\n&]*-e '\.\[test\]'", ci)
    assert installs and all("-c constraints.txt" in line for line in installs)
    assert "scripts/test-newest.sh" in ci
    readme = (ROOT / "README.md").read_text()
    assert "pip install -c constraints.txt -e '.[test]'" in readme
