"""The architecture is checked, not only written.

Every ``.py`` file of ``network/``, ``agents/`` and ``routers/`` is parsed with :mod:`ast`; every
import counts (module level, inside functions, under ``TYPE_CHECKING``, relative ones resolved).
From those the module graph is built, and three rules are asserted:

- no import circles between files (no strongly connected component larger than one file);
- inside ``network/``, every import goes to the same layer or a lower one (table below);
- ``network`` imports neither ``agents`` nor ``routers``.

And the layout of ``agents/`` (its modules grouped like the layers of ``network/``, internal
modules marked with a leading underscore) is held by the tests at the end of this file.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("network", "agents", "routers")

# Layers of ``network/``, low to high: a module may import from its own layer or below.
# A module belongs to the layer of the longest prefix that matches its dotted name.
LAYERS: dict[str, int] = {
    "network.errors": 0,
    "network.ids": 0,
    "network.events": 0,
    "network.logger": 0,  # the library's logger (stdlib NullHandler convention)
    "network.deprecation": 0,  # old spellings kept for one release
    "network.history": 1,
    "network.state": 2,
    "network.run": 3,
    "network.telemetry": 4,
    "network.threads": 5,
    "network.sessions": 5,  # opens a run's thread session (threads, loaded lazily)
    "network.continuing": 5,  # continuations of stopped runs, on their thread sessions
    "network.durable": 6,
    "network.drawing": 7,
    "network.network": 7,
    "network": 7,  # the package itself: network/__init__.py, the facade
    "network.agui": 8,
    "network.mcp": 8,
    "network.devui": 9,
    "network.cli": 10,
}


def module_name(path: Path) -> str:
    """Dotted module name of a file under the repository root."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imported_names(name: str, path: Path) -> set[str]:
    """Every dotted name a module imports, wherever the import statement sits."""
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                # a package's own name is its first anchor; a module's anchor is its package
                keep = len(base) - node.level + (1 if is_package else 0)
                anchor = ".".join(base[:keep])
                target = f"{anchor}.{node.module}" if node.module else anchor
            else:
                target = node.module or ""
            # ``from package import submodule`` lands in the submodule, ``from module import
            # name`` in the module: resolve() keeps the longest prefix that is a file
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def resolve(imported: str, modules: dict[str, Path]) -> str | None:
    """The file a dotted import name lands in (longest known prefix), or None if outside."""
    parts = imported.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def import_graph() -> nx.DiGraph:
    modules = all_modules()
    graph: nx.DiGraph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for imported in imported_names(name, path):
            target = resolve(imported, modules)
            if target is not None and target != name:
                # importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too, but those
                # are the package's own business; the edge that matters is to the file named
                graph.add_edge(name, target)
    return graph


def layer_of(name: str) -> int | None:
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in LAYERS:
            return LAYERS[candidate]
        parts.pop()
    return None


def circles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(
        sorted(component)
        for component in nx.strongly_connected_components(graph)
        if len(component) > 1
    )


def upward_imports(graph: nx.DiGraph) -> list[str]:
    found = []
    for source, target in graph.edges:
        if not (source.startswith("network") and target.startswith("network")):
            continue
        low, high = layer_of(source), layer_of(target)
        assert low is not None and high is not None, (source, target)
        if high > low:
            found.append(f"{source} (layer {low}) -> {target} (layer {high})")
    return sorted(found)


def test_every_network_module_has_a_layer() -> None:
    unplaced = [name for name in all_modules() if name.startswith("network")]
    assert [name for name in unplaced if layer_of(name) is None] == []


def test_no_import_circles() -> None:
    graph = import_graph()
    assert circles(graph) == []
    mutual = sorted({tuple(sorted(e)) for e in graph.edges if graph.has_edge(e[1], e[0])})
    assert mutual == []


def test_network_imports_only_downward() -> None:
    assert upward_imports(import_graph()) == []


def test_network_imports_neither_agents_nor_routers() -> None:
    graph = import_graph()
    outward = sorted(
        f"{source} -> {target}"
        for source, target in graph.edges
        if source.startswith("network") and target.split(".")[0] in ("agents", "routers")
    )
    assert outward == []


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A relative, function-level, TYPE_CHECKING import is still an import."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ..state import kv\n"
        "def f():\n"
        "    from .loop import run_loop\n"
        "    import network.threads.session\n"
    )
    names = imported_names("network.run.probe", source)
    assert {"network.state.kv", "network.run.loop.run_loop", "network.threads.session"} <= names


# The layout of ``agents/``: the agent at the top, everything else in a subpackage named after
# what it is about, and a module a user never imports marked internal by a leading underscore.
AGENTS_TOP_LEVEL = {"agents", "agents.agent", "agents.hooks", "agents._call_events"}
AGENTS_SUBPACKAGES = {
    "agents.tools",
    "agents.output",
    "agents.context",
    "agents.models",
    "agents.mcp",
}
# Their modules are being rewritten; their internal ones get the underscore once that lands.
NOT_YET_MARKED = ("agents.models.", "agents.mcp.")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# a dotted path the docs import or render (`from x import`, `import x`, `::: x`), or any
# backticked `agents.x` path (prose about `network.run(...)` means a Network instance)
_IMPORTED_PATH = re.compile(r"(?:^|\s)(?:from|import|:::) ((?:agents|network|routers)(?:\.\w+)+)")
_ANY_PATH = re.compile(r"\b((?:agents|network|routers)(?:\.\w+)+)")
_AGENTS_PATH = re.compile(r"`(agents(?:\.\w+)+)`")


def is_internal(dotted: str) -> bool:
    """True when a part of the path has a leading underscore (dunders such as __file__ aside)."""
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def documented_paths() -> dict[str, str]:
    """Every dotted path the README and docs import or name: path -> the first file naming it."""
    found: dict[str, str] = {}
    for document in DOCUMENTS:
        text = document.read_text()
        for pattern in (_IMPORTED_PATH, _AGENTS_PATH):
            for path in pattern.findall(text):
                found.setdefault(path, document.relative_to(ROOT).as_posix())
    return found


def importable(dotted: str) -> bool:
    """True when `from a.b import c` would find each part: an attribute first, else a module.

    Attributes come first, as with `from agents import tool` (the decorator, where a stale
    module of that name elsewhere on the path must not be imported over it).
    """
    parts = dotted.split(".")
    target: object = importlib.import_module(parts[0])
    for at, part in enumerate(parts[1:], start=1):
        if hasattr(target, part):
            target = getattr(target, part)
            continue
        try:
            target = importlib.import_module(".".join(parts[: at + 1]))
        except ModuleNotFoundError:
            return False
    return True


def test_agents_top_level_holds_the_agent_and_named_subpackages() -> None:
    agents_modules = [name for name in all_modules() if name.startswith("agents")]
    top_level = {name for name in agents_modules if name.count(".") <= 1}
    assert top_level - AGENTS_SUBPACKAGES == AGENTS_TOP_LEVEL
    packages = {f"agents.{path.name}" for path in (ROOT / "agents").iterdir() if path.is_dir()}
    assert packages - {"agents.__pycache__"} == AGENTS_SUBPACKAGES


def test_every_public_agents_module_is_public_in_fact() -> None:
    """A module without an underscore is one `agents/__init__` imports from, or the docs show.

    Anything else is internal and says so by its name, so a reader knows what they may use.
    """
    exported = {
        target
        for imported in imported_names("agents", ROOT / "agents" / "__init__.py")
        if (target := resolve(imported, all_modules())) is not None
    }
    shown = set(documented_paths())
    unmarked = sorted(
        name
        for name, path in all_modules().items()
        if name.startswith("agents.")
        and path.name != "__init__.py"
        and not is_internal(name)
        and not name.startswith(NOT_YET_MARKED)
        and name not in exported
        and not any(p == name or p.startswith(f"{name}.") for p in shown)
    )
    assert unmarked == []


def test_the_docs_never_show_an_internal_module() -> None:
    shown: list[str] = []
    for document in DOCUMENTS:
        for path in _ANY_PATH.findall(document.read_text()):
            if is_internal(path):
                shown.append(f"{document.relative_to(ROOT).as_posix()}: {path}")
    assert shown == []


def test_every_path_the_docs_show_imports() -> None:
    broken = sorted(
        f"{where}: {path}" for path, where in documented_paths().items() if not importable(path)
    )
    assert broken == []


def test_the_layout_checks_see_what_they_claim() -> None:
    assert is_internal("agents.tools._dispatch") and not is_internal("agents.__file__")
    assert importable("agents.output") and importable("agents.tools.tool.Tool")
    assert not importable("agents.Agent.no_such_attribute")
    assert not importable("agents.no_such_module")
