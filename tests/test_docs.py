"""The documentation is true: the API reference builds in strict mode and covers every public
name, and every code block of the README and docs/*.md runs (or, where it needs a server or a
real provider, compiles and imports only what exists), every shell command names real files
and real command-line options.

A python block runs unless the line before its fence is `<!-- docs-test: compile -->`; the
blocks of one page run in order in one namespace (a later block may use an earlier one's
names), in a temporary directory. Blocks with top-level `await` run in an event loop. A
comment `<!-- docs-test: setup` ... `-->` (its own lines) holds code that runs at that point
and is not shown on the page: the scripted network a fragment talks about, say.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import inspect
import os
import pathlib
import re
import shlex
import subprocess
import sys
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(
    r"^<!-- docs-test: setup\n(?P<setup>.*?)^-->"
    r"|(?:<!-- docs-test: (?P<mode>[a-z]+)[^>]*-->\n)?^```(?P<lang>\w*)\n(?P<code>.*?)^```",
    re.S | re.M,
)
COMMANDS = {"pip", "python", "bash", "agent-network", "npm", "npx", "uvicorn", "export", "curl"}
SELF_HOSTED_SERVERS = {"llama-server", "vllm", "ollama"}  # shown in comments, not run


def blocks(page: pathlib.Path, lang: str) -> list[tuple[str | None, str, int]]:
    text = page.read_text()
    found = []
    for m in BLOCK.finditer(text):
        if m.group("setup") is not None:
            if lang == "python":  # hidden setup code: runs, never shown on the page
                found.append(("setup", m.group("setup"), text.count("\n", 0, m.start("setup")) + 1))
        elif m.group("lang") == lang:
            found.append(
                (m.group("mode"), m.group("code"), text.count("\n", 0, m.start("code")) + 1)
            )
    return found


def check_imports(code: str, where: str) -> None:
    """Every `import x` / `from x import y` in `code` names something that exists."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert importlib.util.find_spec(alias.name) is not None, f"{where}: {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or importlib.util.find_spec(
                    f"{node.module}.{alias.name}"
                ), f"{where}: {node.module} has no {alias.name}"


@pytest.mark.usefixtures("quiet_logs")
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_blocks_run(
    page: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a block that writes files (a thread store) writes here
    printed: dict[int, str] = {}  # what each `print(...)` line of the page printed first
    namespace: dict[str, Any] = {"__name__": "docs", "print": _recording_print(page, printed)}
    for mode, code, line in blocks(page, "python"):
        where = f"{page.name}:{line}"
        compiled = compile(
            "\n" * (line - 1) + code,
            str(page),
            "exec",
            flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
            dont_inherit=True,  # this file's `from __future__ import annotations` is not theirs
        )
        check_imports(code, where)
        if mode == "compile":
            continue
        assert mode in (None, "setup"), f"{where}: unknown docs-test mode {mode!r}"
        if compiled.co_flags & inspect.CO_COROUTINE:
            asyncio.run(eval(compiled, namespace))
        else:
            exec(compiled, namespace)
    assert _printed_against_comments(page, printed) == []


def _recording_print(page: pathlib.Path, printed: dict[int, str]) -> Any:
    """`print` for a page's blocks: prints, and keeps what each line of the page printed."""

    def recording(*values: Any, sep: str | None = " ", **options: Any) -> None:
        caller = sys._getframe(1)
        if caller.f_code.co_filename == str(page):
            printed.setdefault(caller.f_lineno, (sep or " ").join(map(str, values)))
        print(*values, sep=sep, **options)

    return recording


def _printed_against_comments(page: pathlib.Path, printed: dict[int, str]) -> list[str]:
    """`print(x)  # what it prints`: the comment is what the reader will see (quotes, commas
    and spaces aside; a comment with `...` shows only part of it)."""

    def plain(text: str) -> str:
        return re.sub(r"[\s'\",]", "", text)

    lines = page.read_text().splitlines()
    wrong = []
    for number, text in printed.items():
        comment = re.search(r"^\s*print\(.*\)\s+#\s*(.+)$", lines[number - 1])
        if comment is None:
            continue
        said = comment.group(1)
        parts = [part for part in said.split("...") if plain(part)]
        if not all(plain(part) in plain(text) for part in parts):
            wrong.append(f"{page.name}:{number}: prints {text[:200]!r}, the comment says {said!r}")
    return wrong


def _commands(code: str) -> list[list[str]]:
    """The simple commands of a shell block: lines joined, split at `&&`, `||`, `;`, `|`."""
    found: list[list[str]] = []
    for line in code.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        current: list[str] = []
        for token in lexer:
            if token in ("&&", "||", ";", "|", "&"):
                found.append(current)
                current = []
            else:
                current.append(token)
        found.append(current)
    return [tokens for tokens in found if tokens]


def _check_path(token: str, where: str) -> None:
    path = token.split(":", 1)[0] if token.endswith((":network", ":build_network")) else token
    if ":" in token and not path.endswith(".py"):
        path = token.rsplit(":", 1)[0]
    assert (ROOT / path).exists(), f"{where}: {path} does not exist"


def _looks_like_repo_path(token: str) -> bool:
    first = token.split("/", 1)[0]
    return "/" in token and "://" not in token and (ROOT / first).is_dir()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shell_blocks_name_real_files_and_options(page: pathlib.Path) -> None:
    from network.cli.main import _parser

    for _, code, line in blocks(page, "bash"):
        where = f"{page.name}:{line}"
        for tokens in _commands(code):
            command = tokens[0]
            if command in SELF_HOSTED_SERVERS:
                continue
            assert command in COMMANDS, f"{where}: unexpected command {command!r}"
            if command == "agent-network":
                try:
                    _parser().parse_args(tokens[1:])
                except SystemExit:
                    pytest.fail(f"{where}: agent-network rejects {shlex.join(tokens[1:])}")
            if command == "python" and len(tokens) > 2 and tokens[1] == "-m":
                assert importlib.util.find_spec(tokens[2]), f"{where}: no module {tokens[2]}"
            for token in tokens[1:]:
                if _looks_like_repo_path(token):
                    _check_path(token, where)


def test_every_public_name_is_in_the_api_reference() -> None:
    reference = "\n".join(p.read_text() for p in (ROOT / "docs" / "reference").glob("*.md"))
    documented = {
        target.rsplit(".", 1)[-1] for target in re.findall(r"^::: (\S+)", reference, re.M)
    }
    documented |= set(re.findall(r"^        - (\w+)$", reference, re.M))  # listed members
    missing = []
    for package in ("network", "agents", "routers"):
        for name in importlib.import_module(package).__all__:
            if name not in documented:
                missing.append(f"{package}.{name}")
    assert missing == []


def test_every_page_is_in_the_site_navigation() -> None:
    """A page missing from mkdocs.yml's nav is built but reachable from no menu."""
    after_nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    nav = re.split(r"\n(?=\S)", after_nav, maxsplit=1)[0]  # up to the next top-level key
    listed = set(re.findall(r":\s*(\S+\.md)\s*$", nav, re.M))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages - listed == set()


def test_ci_builds_the_reference_strictly_before_the_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "mkdocs build --strict" in ci
    assert ci.index("mkdocs build --strict") < ci.index("python -m pytest")


@pytest.mark.heavy
def test_api_reference_builds_in_strict_mode(tmp_path: pathlib.Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    history = (tmp_path / "reference" / "history" / "index.html").read_text()
    for field in ("output_value", "state_delta", "tool_calls", "AssistantMessage"):
        assert field in history
    models = (tmp_path / "reference" / "models" / "index.html").read_text()
    assert "agents.models.litellm_model" in models and "response_format" in models
    assert (tmp_path / "cli" / "index.html").exists()  # the guides are part of the site


def _imported_and_used(code: str) -> tuple[set[str], set[str], set[str]]:
    """The names a block imports, the names it binds otherwise, and the names it reads."""
    tree = compile(code, "<block>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    imported: set[str] = set()
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else used).add(node.id)
    return imported, bound, used


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_shown_block_imports_what_it_uses(page: pathlib.Path) -> None:
    """A reader copies what the page shows: a name a block reads that only a hidden setup
    imports (`tool`, `Agent`, `Annotated`, ...) is a NameError in the reader's file. The
    objects a setup makes (a `network` to talk about) may stay hidden; the imports may not."""
    shown: set[str] = set()
    hidden_imports: set[str] = set()
    missing = []
    for mode, code, line in blocks(page, "python"):
        imported, bound, used = _imported_and_used(code)
        if mode == "setup":
            hidden_imports |= imported
            shown |= bound  # the objects it makes stand for the reader's own
            continue
        shown |= imported | bound
        unseen = sorted((used & hidden_imports) - shown)
        if unseen:
            missing.append(f"{page.name}:{line}: {', '.join(unseen)}")
    assert missing == []


def test_the_error_reference_puts_warnings_under_warnings() -> None:
    """docs/reference/errors.md: the errors first, then `## Warnings` and only warnings
    (InterruptError, AlreadyAnsweredError and ClientToolError were listed as warnings)."""
    errors, _, warnings = (
        (ROOT / "docs" / "reference" / "errors.md").read_text().partition("\n## Warnings\n")
    )

    def shown(text: str) -> list[type]:
        return [
            getattr(importlib.import_module("network"), path.rsplit(".", 1)[1])
            for path in re.findall(r"^::: (\S+)", text, re.M)
        ]

    assert [c.__name__ for c in shown(errors) if issubclass(c, Warning)] == []
    assert [c.__name__ for c in shown(warnings) if not issubclass(c, Warning)] == []
    assert shown(warnings)


def test_the_manuals_index_links_every_reference_page() -> None:
    """docs/index.md's table leads to each API reference page (durable, memory, evals and
    the dev UI's were reachable from the site's menu only)."""
    index = (ROOT / "docs" / "index.md").read_text()
    linked = set(re.findall(r"\]\((reference/[\w-]+\.md)\)", index))
    pages = {
        p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs" / "reference").glob("*.md")
    }
    assert pages - linked == set()


@pytest.mark.parametrize("facade", ["network.Network", "agents.Agent", "agents.tool"])
def test_the_reference_documents_every_option_of_the_facades(facade: str) -> None:
    """The API reference is built from the docstrings: each keyword of `Network(...)`,
    `Agent(...)` and `@tool(...)` has its entry under `Args:` (`predict_state` and
    `capabilities` had none)."""
    module, name = facade.rsplit(".", 1)
    obj = getattr(importlib.import_module(module), name)
    documented = set(re.findall(r"^\s{4}(\w+):", inspect.getdoc(obj) or "", re.M))
    options = [
        p.name
        for p in inspect.signature(obj).parameters.values()
        if p.kind is p.KEYWORD_ONLY and not p.name.startswith("_")
    ]
    assert [option for option in options if option not in documented] == []
