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
import functools
import importlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # imported where used: every worker collects this file, one runs it
    import networkx as nx

# One worker runs them all (`--dist loadgroup`): they share the parsed syntax trees cached
# below, which every worker would otherwise parse again (about 3 s of CPU each time).
pytestmark = pytest.mark.xdist_group("architecture")

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("network", "agents", "routers")

# Layers of ``network/``, low to high: a module may import from its own layer or below.
# A module belongs to the layer of the longest prefix that matches its dotted name.
LAYERS: dict[str, int] = {
    "network.errors": 0,
    "network.ids": 0,
    "network.events": 0,
    "network.logger": 0,  # the library's logger (stdlib NullHandler convention)
    "network.numbers": 0,  # the one check of numeric options
    "network.mappings": 0,  # the one check of mapping options
    "network.deprecation": 0,  # old spellings kept for one release
    "network.warned": 0,  # warnings attributed to the user's line
    "network.sentinels": 0,  # marker values told apart by identity, pickled by name
    "network.json_fields": 0,  # a report's to_dict: its fields, camelCase, as JSON data
    "network.utf8": 0,  # text with a UTF-8 form: the one test for lone surrogates
    "network.one_argument": 0,  # the one check of a function called with one argument
    "network.urls": 0,  # whether a text is an http(s) URL a client can send a request to
    "network.redacted": 0,  # a URL as errors and reprs show it: the password as ***
    "network.version": 0,  # the installed release, as MCP peers and OTel receivers see it
    "network.history": 1,
    "network.state": 2,
    "network.run": 3,
    "network.telemetry": 4,
    "network.capabilities": 5,  # the features a network or a run declares (each a folder)
    "network.threads": 5,
    "network.memory": 5,  # long-term memory beside the thread store (same backends and URLs)
    "network.sessions": 5,  # opens a run's thread session (threads, loaded lazily)
    "network.continuing": 5,  # continuations of stopped runs, on their thread sessions
    "network.kernel": 5,  # one run of a network definition: what Network.run hands it to
    "network.durable": 6,
    "network.drawing": 7,
    "network.network": 7,
    "network": 7,  # the package itself: network/__init__.py, the facade
    "network.serving": 8,  # what every protocol server needs: principals, admission, limits
    "network.evals": 8,  # datasets of cases run on a network, scored, reported
    "network.agui": 9,
    "network.a2a": 9,
    "network.mcp": 9,
    "network.devui": 10,
    "network.cli": 11,
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


@functools.cache
def syntax_tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once for every rule that reads it (no test changes it)."""
    return ast.parse(path.read_text(), str(path))


@functools.cache
def imported_names(name: str, path: Path) -> frozenset[str]:
    """Every dotted name a module imports, wherever the import statement sits."""
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(syntax_tree(path)):
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
    return frozenset(names)


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
    import networkx as nx

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
    import networkx as nx

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


def test_every_part_of_network_has_a_layer_of_its_own() -> None:
    """A new file or folder at the top of `network/` is placed on purpose: the package's own
    entry (the facade, layer 7) would otherwise take it (`network/urls.py`, a leaf, did)."""
    top = {name for name in all_modules() if name.startswith("network.") and name.count(".") == 1}
    assert sorted(top - set(LAYERS)) == []


LAYOUT = ROOT / "docs" / "layout.md"


def test_docs_layout_names_every_part_of_the_repository() -> None:
    """docs/layout.md matches the repository: it names each file and folder at the top of
    `network/`, each serving module, each example, and lists each capability folder."""
    text = LAYOUT.read_text()
    network_dir, serving_dir = ROOT / "network", ROOT / "network" / "serving"
    names = [p.name for p in network_dir.glob("*.py") if p.name != "__init__.py"]
    names += [f"{p.name}/" for p in network_dir.iterdir() if (p / "__init__.py").exists()]
    names += [p.name for p in serving_dir.glob("*.py") if p.name != "__init__.py"]
    names += [p.name for p in (ROOT / "examples").glob("*.py")]
    assert sorted(name for name in names if name not in text) == []
    for package in ("network/capabilities", "agents/capabilities"):
        listed = re.search(re.escape(package) + r"/\{([^}]*)\}", text)
        assert listed is not None, package
        folders = {p.name for p in (ROOT / package).iterdir() if (p / "__init__.py").exists()}
        assert {name.strip() for name in listed.group(1).split(",")} == folders, package


def test_docs_layout_lists_the_leaves_of_this_table() -> None:
    """The first layer of docs/layout.md is LAYERS' layer 0, file for file."""
    first = re.search(r"^1\. (.*?)^2\. ", LAYOUT.read_text(), re.M | re.S)
    assert first is not None
    listed = set(re.findall(r"`(\w+)\.py`", first.group(1)))
    leaves = {name.split(".", 1)[1] for name, layer in LAYERS.items() if layer == 0}
    assert listed == leaves


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


# -- the kernel and its capabilities ---------------------------------------------------------

CAPABILITY_ROOTS = ("agents.capabilities", "network.capabilities")
# The facades that build capabilities from the keywords users write (and the packages that
# name their public parts); nothing else names a capability.
# Where options become capabilities; and the routing agent, whose own model requests (not an
# agent call's) reserve on the run's shared budgets through the budgets capability's model.
BUILDERS = {"agents", "agents.agent", "network", "network.network", "routers.routing_agent"}


def capability_of(name: str) -> str | None:
    """`agents.capabilities.handoffs` for any module of that folder, else None."""
    for root in CAPABILITY_ROOTS:
        if name.startswith(f"{root}."):
            return ".".join(name.split(".")[: root.count(".") + 2])
    return None


def capability_imports() -> list[tuple[str, str]]:
    """(importer, capability module) for every import of a capability's module."""
    modules = all_modules()
    found = []
    for name, path in modules.items():
        for imported in imported_names(name, path):
            target = resolve(imported, modules)
            if target is not None and capability_of(target) is not None:
                found.append((name, target))
    return found


def test_a_capability_never_imports_another() -> None:
    crossing = sorted(
        f"{importer} -> {target}"
        for importer, target in capability_imports()
        if capability_of(importer) is not None and capability_of(importer) != capability_of(target)
    )
    assert crossing == []


def test_the_kernel_names_no_capability() -> None:
    named = sorted(
        f"{importer} -> {target}"
        for importer, target in capability_imports()
        if capability_of(importer) is None and importer not in BUILDERS
    )
    assert named == []


def test_the_capability_rules_see_what_they_claim() -> None:
    assert capability_of("agents.capabilities.handoffs._tools") == "agents.capabilities.handoffs"
    assert capability_of("network.capabilities.guardrails") == "network.capabilities.guardrails"
    assert capability_of("network.capabilities") is None  # the root: no capability's own
    assert capability_of("network.run.capability") is None
    assert ("network.network", "network.capabilities.guardrails") in capability_imports()


# The layout of ``agents/``: the agent at the top, everything else in a subpackage named after
# what it is about, and a module a user never imports marked internal by a leading underscore.
AGENTS_TOP_LEVEL = {
    "agents",
    "agents.agent",  # the options of an agent, and the capabilities they build
    "agents.step",  # the kernel: one agent call, in stages
    "agents.resume",  # the kernel: finishing the tool calls a run stopped on
    "agents._template",  # the instructions' template
    "agents._call_events",  # one inference's events
}
AGENTS_SUBPACKAGES = {
    "agents.tools",
    "agents.models",
    "agents.capabilities",
}
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
    modules = all_modules()
    packages = {name: path for name, path in modules.items() if path.name == "__init__.py"}
    exported = {
        target
        for package, path in packages.items()
        if package.startswith("agents") and not is_internal(package)
        for imported in imported_names(package, path)
        if (target := resolve(imported, modules)) is not None
    }
    shown = set(documented_paths())
    unmarked = sorted(
        name
        for name, path in modules.items()
        if name.startswith("agents.")
        and path.name != "__init__.py"
        and not is_internal(name)
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
    assert importable("agents.capabilities.output") and importable("agents.tools.tool.Tool")
    assert not importable("agents.Agent.no_such_attribute")
    assert not importable("agents.no_such_module")


# -- typed events inside, AG-UI at the edge ---------------------------------------------------

# The run emits typed events (`network.run.events`); AG-UI is one encoding of them. Only the
# encoder spells AG-UI event types, and only the encoder and the AG-UI server read AG-UI models.
AGUI_ENCODER = ("network.events", "network.run.agui_encoder")  # the builders and the encoder
AGUI_EDGE = (*AGUI_ENCODER, "network.agui")  # what handles the wire's models


def agui_event_type_spellings(name: str, path: Path) -> list[str]:
    """Where a module spells an AG-UI event type: a string such as "STEP_FINISHED" (outside
    docstrings), or `EventType.<member>`."""
    from ag_ui.core import EventType

    types = {member.value for member in EventType}
    tree = syntax_tree(path)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in types and id(node) not in docstrings:
            found.append(f"{name}:{node.lineno} {node.value!r}")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "EventType"
        ):
            found.append(f"{name}:{node.lineno} EventType.{node.attr}")
    return found


def outside(prefixes: tuple[str, ...], name: str) -> bool:
    return not any(name == p or name.startswith(p + ".") for p in prefixes)


def test_only_the_agui_encoder_spells_an_agui_event_type() -> None:
    """Consumers dispatch on the typed events' classes, never on a wire type string."""
    found = [
        spelling
        for name, path in all_modules().items()
        if outside(AGUI_ENCODER, name)
        for spelling in agui_event_type_spellings(name, path)
    ]
    assert found == []


def test_only_the_agui_edge_imports_ag_ui() -> None:
    reading_the_wire = [
        name
        for name, path in all_modules().items()
        if outside(AGUI_EDGE, name)
        and any(i == "ag_ui" or i.startswith("ag_ui.") for i in imported_names(name, path))
    ]
    assert reading_the_wire == []


# The typed events and the capability seam are the kernel's vocabulary: they name no wire event
# type at all, not even in a docstring or a comment (the encoder documents the mapping).
KERNEL_VOCABULARY = ("network.run.events", "network.run.capability", "network.run.stages")


def wire_words(name: str, path: Path) -> list[str]:
    """Every AG-UI event type a module's text names, prose included."""
    from ag_ui.core import EventType

    types = sorted((member.value for member in EventType), key=len, reverse=True)
    words = re.compile(r"\b(" + "|".join(types) + r")\b")
    lines = path.read_text().splitlines()
    return [f"{name}:{n} {word}" for n, line in enumerate(lines, 1) for word in words.findall(line)]


def test_the_typed_events_never_speak_the_wire() -> None:
    modules = all_modules()
    assert [word for name in KERNEL_VOCABULARY for word in wire_words(name, modules[name])] == []


def test_the_event_type_check_sees_what_it_claims(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        '"""A docstring naming RUN_FINISHED is fine."""\n'
        "from ag_ui.core import EventType\n"
        "def sink(event):\n"
        '    """STEP_FINISHED here too."""\n'
        '    if event.type == "STEP_FINISHED" or event.type in {"RUN_ERROR"}:\n'
        "        return EventType.CUSTOM\n"
    )
    assert sorted(agui_event_type_spellings("probe", source)) == [
        "probe:5 'RUN_ERROR'",
        "probe:5 'STEP_FINISHED'",
        "probe:6 EventType.CUSTOM",
    ]
    assert "ag_ui.core.EventType" in imported_names("network.run.probe", source)
    assert wire_words("probe", source) == [
        "probe:1 RUN_FINISHED",
        "probe:4 STEP_FINISHED",
        "probe:5 STEP_FINISHED",
        "probe:5 RUN_ERROR",
        "probe:6 CUSTOM",
    ]


# -- typed seams ------------------------------------------------------------------------------

# Parameters and attributes with these names stand for a network, an agent, a tool or a run
# context; `Any` there hides every mistake from the type checker, so they carry the library's
# Protocols and types (`NetworkLike`, `AgentLike`, `Tool`, `RunContext`, ...) instead.
SEAM_NAMES = {"network", "agent", "tool", "ctx", "context"}

# The seams still `Any`, by module, each for a reason (the list only shrinks):
UNTYPED_SEAMS_LEFT: dict[str, int] = {
    # `network.run.context` imports `Branch` from here, so `AgentLike` (defined there) cannot
    # be named: a branch holds an agent or, until the network resolves it, an agent's name
    "network.run.parallel": 2,
    # DBOS's workflow context (its step counter and owner), whose class is private to DBOS
    "network.durable.steps": 1,
}


def untyped_seams() -> dict[str, list[str]]:
    """`name: Any` annotations of a seam name (parameters and attributes), by module."""
    found: dict[str, list[str]] = {}
    for name, path in all_modules().items():
        for node in ast.walk(syntax_tree(path)):
            annotated: list[tuple[str, ast.expr | None]] = []
            if isinstance(node, ast.arg):
                annotated.append((node.arg, node.annotation))
            elif isinstance(node, ast.AnnAssign):
                target = node.target
                attribute = target.attr if isinstance(target, ast.Attribute) else None
                simple = target.id if isinstance(target, ast.Name) else None
                annotated.append((attribute or simple or "", node.annotation))
            for arg, annotation in annotated:
                if (
                    arg in SEAM_NAMES
                    and isinstance(annotation, ast.Name)
                    and annotation.id == "Any"
                ):
                    found.setdefault(name, []).append(f"{arg} (line {node.lineno})")
    return found


def test_a_network_agent_tool_or_context_is_never_typed_any() -> None:
    found = untyped_seams()
    left = {name: len(places) for name, places in found.items()}
    grown = {
        name: found[name] for name, count in left.items() if count > UNTYPED_SEAMS_LEFT.get(name, 0)
    }
    assert grown == {}
    typed = sorted(
        name for name in UNTYPED_SEAMS_LEFT if left.get(name, 0) < UNTYPED_SEAMS_LEFT[name]
    )
    assert typed == [], "these were typed: lower their counts in UNTYPED_SEAMS_LEFT"


def test_the_three_packages_are_type_checked_strictly() -> None:
    config = (ROOT / "pyproject.toml").read_text()
    overrides = config[config.index('[[tool.mypy.overrides]]\nmodule = ["network"') :]
    section = overrides[: overrides.index("\n\n")]
    for package in PACKAGES:
        assert f'"{package}", "{package}.*"' in section
    for flag in ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any"):
        assert f"{flag} = true" in section


# Tests named after the modules they test: `tests/` mirrors the packages, and the behaviour of
# `network/run/loop.py` is tested in `tests/network/run/test_loop.py` (an internal module's
# file drops the underscore: `agents/tools/_dispatch.py` -> `tests/agents/tools/test_dispatch.py`).
# A module may have more test files (named after the behaviour they check); one is its own.

# Modules honestly tested through another module's file, and the file that tests them.
TESTED_THROUGH = {
    # each capability's folder is tested by its capability's file, beside the others
    **{
        f"agents.capabilities.{module}": f"tests/agents/capabilities/{folder}/{test}.py"
        for module, folder, test in (
            ("handoffs.input_filter", "handoffs", "test_capability"),
            ("handoffs.options", "handoffs", "test_capability"),
            ("memory.options", "memory", "test_capability"),
            ("memory.tools", "memory", "test_capability"),
            ("hooks.options", "hooks", "test_capability"),
            ("mcp.capability", "mcp", "test_listing"),
        )
    },
    **{
        f"network.capabilities.{module}": f"tests/network/capabilities/{folder}/{test}.py"
        for module, folder, test in (
            ("budgets.metered", "budgets", "test_capability"),
            ("client_tools.options", "client_tools", "test_capability"),
            ("guardrails.capability", "guardrails", "test_agent_check"),
            ("guardrails.decorators", "guardrails", "test_agent_check"),
            ("predictive.streaming", "predictive", "test_capability"),
            ("predictive.writes", "predictive", "test_capability"),
            ("replay.report", "replay", "test_capability"),
            ("replay.router", "replay", "test_driver"),
            ("replay.tool_writes", "replay", "test_capability"),
        )
    },
    "agents.resume": "tests/agents/capabilities/confirmation/test_capability.py",
    # what a request sent with its answers, driven through a served thread whose step fails
    "network.serving.held_messages": "tests/network/agui/test_resume_with_message_failures.py",
    # the A2A server's parts, driven whole through real processes and the official client
    **{
        f"network.a2a.{module}": "tests/network/a2a/test_server.py"
        for module in ("card", "handler", "live", "message_in", "message_out", "tasks")
    },
    # what a plain client (the official test kit) meets: its version, its status filter
    **{
        f"network.a2a.{module}": "tests/network/a2a/test_plain_clients.py"
        for module in ("state_filter", "version")
    },
    # a 0.3 call's params the SDK's adapter cannot read, refused with the field named
    "network.a2a.v03_params": "tests/network/a2a/test_malformed.py",
    # calls the SDK answered with an internal error, or not at all
    "network.a2a.calls": "tests/network/a2a/test_malformed.py",
    # a thread's runs read back: what a replay replays (and an export exports)
    "network.threads.recorded_runs": "tests/network/capabilities/replay/test_recording.py",
    "network.history.model_io": "tests/agents/models/test_base.py",  # named there as models see it
    # the one way into a run: its signature, options and old spellings in one file
    "network.run.entry_points": "tests/network/run/test_run_signature.py",
    "network.run.options": "tests/network/run/test_run_signature.py",
    "network.run.thread_ref": "tests/network/run/test_run_signature.py",
    "network.deprecation": "tests/network/run/test_run_signature.py",
    "network.run.inputs": "tests/network/run/test_continuations.py",
    "network.continuing": "tests/network/run/test_continuations.py",
    "network.run.definition": "tests/network/run/test_protocols.py",  # a Network has its shape
    "network.sessions": "tests/network/threads/test_pending.py",  # opened for continuations
    "network.threads.pending_claims": "tests/network/threads/test_pending_race.py",
    "network.threads.sql_pending": "tests/network/threads/test_pending_race.py",
    "network.drawing": "tests/routers/test_mermaid.py",  # routers.network_mermaid is the same
    "network.memory.items": "tests/network/memory/test_memories.py",  # what the store hands back
    # GET /api/value, driven from the page in Chromium
    "network.devui.whole_values": "tests/network/devui/test_browser_long_values.py",
    # the dev server's error answers: every refusal of its endpoints
    "network.devui.http_errors": "tests/network/devui/test_server.py",
    # time travel (from main): every store's checkpoints, fork and rewind in one file
    "network.threads.checkpoint_data": "tests/network/threads/test_time_travel.py",
    "network.threads.checkpoint_store": "tests/network/threads/test_time_travel.py",
    "network.threads.memory_timeline": "tests/network/threads/test_time_travel.py",
    "network.threads.sql_timeline": "tests/network/threads/test_time_travel.py",
    "network.threads.sql_timeline_tables": "tests/network/threads/test_time_travel.py",
    "network.threads.timeline": "tests/network/threads/test_time_travel.py",
    "network.threads.sql_errors": "tests/network/threads/test_ids.py",  # a store error's form
    # the AG-UI server on a store: its answers, snapshots, thread list and RUN_FINISHED usage
    "network.agui.capabilities": "tests/network/agui/test_stored.py",
    "network.agui.snapshot": "tests/network/agui/test_stored.py",
    "network.agui.thread_list": "tests/network/agui/test_stored.py",
    "network.run.usage_report": "tests/network/agui/test_stored.py",
    "network.threads.sql_leases": "tests/network/threads/test_leases.py",
    "network.threads.store_leases": "tests/network/threads/test_leases.py",
    "routers.routing_prompt": "tests/routers/test_routing_agent.py",  # the routing agent's prompt
    "routers.routing_tools": "tests/routers/test_routing_agent.py",  # and its two tools
    # the AG-UI server's checks of a request, each refusal driven over HTTP
    "network.agui.auth": "tests/network/agui/test_hostile_requests.py",
    "network.agui.declared_tools": "tests/network/agui/test_hostile_requests.py",
    "network.agui.run_errors": "tests/network/agui/test_hostile_requests.py",
    "network.serving.content_type": "tests/network/agui/test_hostile_requests.py",
    "network.serving.errors": "tests/network/agui/test_hostile_requests.py",
    "network.serving.registry": "tests/network/agui/test_memory_bounds.py",
    # the serving layer's admission, through a protocol built on it alone, on every store
    "network.serving.admission": "tests/network/serving/test_threads.py",
    "network.serving.stored": "tests/network/serving/test_threads.py",
    "network.serving.client_writes": "tests/network/agui/test_server.py",
    "network.mcp.arguments": "tests/network/mcp/test_threaded.py",  # the tool's arguments
    # a request with an unusable id, over Streamable HTTP and over stdio, from raw clients
    "network.mcp.bad_ids": "tests/network/mcp/test_hostile_clients.py",
    "network.mcp.request_ids": "tests/network/mcp/test_bad_lines.py",
    "network.mcp.stdin_lines": "tests/network/mcp/test_bad_lines.py",
    "network.agui.tool_results": "tests/network/agui/test_hostile_requests.py",
    "network.agui.client_state": "tests/network/agui/test_server.py",
    "network.agui.input": "tests/network/agui/test_server.py",
    "network.agui.messages": "tests/network/agui/test_server.py",
    "network.agui.registry": "tests/network/agui/test_memory_bounds.py",
    # the command line, driven as a user would, through subprocesses
    "network.cli.bind": "tests/network/cli/test_dev.py",
    "network.cli.endpoint": "tests/network/cli/test_main.py",
    "network.cli.load": "tests/network/cli/test_main.py",
    "network.cli.trace": "tests/network/cli/test_main.py",
    # the dev server's parts, through its endpoints over real HTTP
    "network.devui.bounded": "tests/network/devui/test_server.py",
    "network.devui.graph": "tests/network/devui/test_server.py",
    "network.devui.observe": "tests/network/devui/test_server.py",
    "network.devui.replay": "tests/network/devui/test_server.py",
    "network.devui.steps": "tests/network/devui/test_server.py",
    "network.devui.store_access": "tests/network/devui/test_server.py",
    # durable runs, through runs in this process and in child processes killed mid-step
    "network.durable.client": "tests/network/durable/test_workers.py",
    "network.durable.connections": "tests/network/durable/test_step_table.py",  # drops them all
    "network.durable.worker": "tests/network/durable/test_workers.py",
    "network.durable.continuation": "tests/network/durable/test_interrupted_runs.py",
    "network.durable.engine": "tests/network/durable/test_system_database.py",
    "network.durable.sqlite_journal": "tests/network/durable/test_system_database.py",
    "network.durable.liveness": "tests/network/durable/test_takeover.py",
    # runs queued by the previous version, served by this one's workers
    "network.durable.legacy_queue": "tests/network/durable/test_network_queues.py",
    "network.durable.process": "tests/network/durable/test_runs.py",
    "network.durable.replay_gate": "tests/network/durable/test_resumed_run.py",
    "network.durable.router_spend": "tests/network/durable/test_replayed_spending.py",
    "network.durable.steps": "tests/network/durable/test_crash.py",
    "network.run.steps": "tests/network/durable/test_crash.py",  # its one implementation
    "network.durable.workflow": "tests/network/durable/test_in_process.py",
    # the parts of a run, through runs
    "network.network": "tests/network/run/test_run_signature.py",
    "network.events": "tests/network/run/test_streaming.py",
    "network.run.lifecycle": "tests/network/run/test_streaming.py",
    "network.run.engine": "tests/network/run/test_loop.py",
    "network.run.fork": "tests/network/parallel/test_failures.py",
    "network.run.join": "tests/network/parallel/test_determinism.py",
    "network.run.held_branches": "tests/network/parallel/test_resume.py",
    "network.state.branch": "tests/network/run/test_parallel.py",
    "network.run.interrupts": "tests/network/run/test_continuations.py",
    "network.run.resumption": "tests/network/run/test_continuations.py",
    "network.run.client_results": "tests/network/capabilities/client_tools/test_capability.py",
    "network.run.client_tools": "tests/network/capabilities/client_tools/test_capability.py",
    "network.run.logs": "tests/network/test_logger.py",
    "network.run.predictive_config": "tests/network/capabilities/predictive/test_capability.py",
    "network.run.result_view": "tests/network/run/test_result.py",
    "network.run.retry_policy": "tests/agents/models/test_retry_policy.py",
    "network.run.tool_defaults": "tests/agents/tools/test_tool_timeouts.py",
    "network.history.record": "tests/network/history/test_results.py",  # the round trip
    # what summarisers write
    "network.history.summary": "tests/agents/capabilities/context/test_policy.py",
    "network.history.writes": "tests/network/threads/test_history_of.py",
    "network.state.staged": "tests/agents/tools/test_tool_state.py",  # a tool's view, rollback
    "network.state.typenames": "tests/network/state/test_json_form.py",
    "network.state.values": "tests/network/state/test_kv.py",
    "network.telemetry.conventions": "tests/network/telemetry/test_spans.py",
    "network.telemetry.options": "tests/network/telemetry/test_content.py",
    # every thread store against one conformance suite
    "network.threads.codec": "tests/network/threads/test_conformance.py",
    "network.threads.memory": "tests/network/threads/test_conformance.py",
    "network.threads.protocol": "tests/network/threads/test_conformance.py",
    "network.threads.sql": "tests/network/threads/test_conformance.py",
    "network.threads.sql_commit": "tests/network/threads/test_conformance.py",
    "network.threads.sql_tables": "tests/network/threads/test_conformance.py",
    "network.threads.thread_data": "tests/network/threads/test_conformance.py",
    "network.threads.decoded": "tests/network/threads/test_long_threads.py",
    "network.threads.resolve": "tests/network/threads/test_defaults.py",
    "network.threads.urls": "tests/network/threads/test_defaults.py",
    "network.threads.session": "tests/network/threads/test_runs.py",
    "network.threads.thread_load": "tests/network/threads/test_runs.py",  # loading, scopes
    "network.threads.commit_parts": "tests/network/threads/test_history_of.py",  # who wrote what
    "network.threads.sql_message_ids": "tests/network/threads/test_message_ids.py",  # in SQL
    # MCP servers, real ones over stdio and HTTP
    "agents.capabilities.mcp.content": "tests/agents/capabilities/mcp/test_stdio.py",
    "agents.capabilities.mcp.errors": "tests/agents/capabilities/mcp/test_connect_timeout.py",
    "agents.capabilities.mcp.server": "tests/agents/capabilities/mcp/test_lifetimes.py",
    "agents.capabilities.mcp.tool": "tests/agents/capabilities/mcp/test_listing.py",
    "agents.models.registry": "tests/agents/models/test_openai_native.py",
}
# Public modules without a test file of their own: none left. It stays empty: a new module comes
# with its test file (or, when another module's file is the honest place, a TESTED_THROUGH line).
NO_TEST_FILE_YET: set[str] = set()


def own_test_file(name: str) -> Path:
    """`tests/<package path>/test_<module>.py`, the leading underscore of the module dropped."""
    *package, module = name.split(".")
    return ROOT.joinpath("tests", *package, f"test_{module.lstrip('_')}.py")


def public_modules() -> list[str]:
    return sorted(
        name
        for name, path in all_modules().items()
        if path.name not in ("__init__.py", "__main__.py") and not is_internal(name)
    )


def test_every_public_module_has_a_test_file_of_its_own() -> None:
    without = {name for name in public_modules() if not own_test_file(name).exists()}
    new = sorted(without - NO_TEST_FILE_YET - set(TESTED_THROUGH))
    assert new == [], "add tests/<package>/test_<module>.py for these modules"
    stale = sorted(NO_TEST_FILE_YET - without)
    assert stale == [], "these have a test file (or are gone): take them off NO_TEST_FILE_YET"


def test_modules_tested_through_others_name_a_real_test_file() -> None:
    modules = all_modules()
    assert [name for name in TESTED_THROUGH if name not in modules] == []
    assert [f for f in TESTED_THROUGH.values() if not (ROOT / f).exists()] == []


def test_every_test_file_the_repository_names_exists() -> None:
    """A test file moved or renamed is followed by the docs and the code that point to it."""
    named = re.compile(r"\btests/[\w/]+?\.py\b")
    texts = [*DOCUMENTS, ROOT / "pyproject.toml", *(ROOT / "benchmarks").glob("*.md")]
    for package in (*PACKAGES, "benchmarks", "scripts"):  # examples name files they generate
        found = sorted((ROOT / package).rglob("*.py")) + sorted((ROOT / package).rglob("*.sh"))
        # not the peers' environments (benchmarks/.venv-*, node_modules): other projects' files
        texts += [
            f
            for f in found
            if not any(p.startswith(".venv") or p == "node_modules" for p in f.parts)
        ]
    missing = sorted(
        f"{text.relative_to(ROOT).as_posix()}: {path}"
        for text in texts
        for path in named.findall(text.read_text())
        if not (ROOT / path).exists()
    )
    assert missing == []


# -- what the docs import is public: in the `__all__` it is imported from ---------------------

# `from x import a, b` on one line or in parentheses: Python blocks and prose alike
_FROM_IMPORT = re.compile(
    r"from ((?:agents|network|routers)(?:\.\w+)*) import (\([^)]*\)|[\w, ]+)", re.M
)


def documented_imports() -> dict[tuple[str, str], str]:
    """Every `(module, name)` the README and docs import: -> the first file showing it."""
    found: dict[tuple[str, str], str] = {}
    for document in DOCUMENTS:
        for module, names in _FROM_IMPORT.findall(document.read_text()):
            for name in names.strip("()").replace("\n", " ").split(","):
                name = name.split(" as ")[0].strip()
                if name:
                    found.setdefault((module, name), document.relative_to(ROOT).as_posix())
    return found


def public_in(module: str, name: str) -> bool:
    """True when `name` is in `module.__all__`, or is a module of that package."""
    imported = importlib.import_module(module)
    if name in getattr(imported, "__all__", ()):
        return True
    return (
        importlib.util.find_spec(f"{module}.{name}") is not None
        if hasattr(imported, "__path__")
        else False
    )


def test_every_name_the_docs_import_is_in_an_all() -> None:
    """Public API is what the `__all__` lists name (docs/index.md): a name the docs import
    from a module that does not list it is one a reader may use and a refactor may move."""
    private = sorted(
        f"{where}: from {module} import {name}"
        for (module, name), where in documented_imports().items()
        if not public_in(module, name)
    )
    assert private == []


_CLASS_NAME = re.compile(r"`(?:[\w.]+\.)?([A-Z]\w+)`")  # `Name` or `a.b.Name`


def exported_names() -> set[str]:
    """Every name an `__all__` of the three packages or of one of their packages lists."""
    names: set[str] = set()
    for name, path in all_modules().items():
        if path.name == "__init__.py" and not is_internal(name):
            names.update(getattr(importlib.import_module(name), "__all__", ()))
    return names


def test_every_error_the_docs_name_is_exported() -> None:
    """An error the docs say a call raises is one a reader catches: it is in an `__all__`
    (`network.ClientToolError` was only at `network.run.client_results`, `agents`'
    `ResponseFormatRefused` only at a private module)."""
    defined_in: dict[str, str] = {}
    for module, path in all_modules().items():
        for node in ast.walk(syntax_tree(path)):
            if isinstance(node, ast.ClassDef):
                defined_in.setdefault(node.name, module)
    exported = exported_names()
    hidden = []
    for document in DOCUMENTS:
        for name in sorted(set(_CLASS_NAME.findall(document.read_text()))):
            if name not in defined_in or name in exported:
                continue
            found = getattr(importlib.import_module(defined_in[name]), name, None)
            if isinstance(found, type) and issubclass(found, BaseException):
                hidden.append(f"{document.relative_to(ROOT).as_posix()}: {name}")
    assert hidden == []


def reference_targets() -> dict[str, str]:
    """Every path the API reference renders (`::: path`, and the `members:` listed under a
    module) -> the reference page showing it."""
    found: dict[str, str] = {}
    for page in sorted((ROOT / "docs" / "reference").glob("*.md")):
        for target, options in re.findall(r"^::: (\S+)((?:\n    .*)*)", page.read_text(), re.M):
            found.setdefault(target, page.name)
            for member in re.findall(r"^        - (\w+)$", options, re.M):
                found.setdefault(f"{target}.{member}", page.name)
    return found


def test_every_name_the_reference_shows_is_in_an_all() -> None:
    """The reference shows each name at a public address: a module, or a name its module's
    `__all__` lists (`network.serving.threads.ServedThreads` was shown for
    `network.serving.ServedThreads`, `agents.models.litellm_model.LiteLLMModel` for
    `agents.LiteLLMModel`)."""
    private = []
    for target, page in reference_targets().items():
        module, rest = longest_module(target)
        # `network.Network.stream`: a method, at its class's address
        if rest and not public_in(module, rest[0]):
            private.append(f"{page}: {target}")
    assert private == []


def longest_module(dotted: str) -> tuple[str, list[str]]:
    """The longest prefix of `dotted` that is a module, and the names after it."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        return ".".join(parts[:end]), parts[end:]
    raise AssertionError(f"{dotted} is in no module")


def test_the_docs_import_check_sees_what_it_claims() -> None:
    assert public_in("network", "Network") and public_in("network", "durable")
    assert public_in("network.threads", "MemoryStore")
    assert not public_in("network.history.messages", "UserMessage")  # no __all__ there
    assert not public_in("network", "no_such_name")
    assert _FROM_IMPORT.findall("from agents import (\n    Agent,\n    tool,\n)\n") == [
        ("agents", "(\n    Agent,\n    tool,\n)")
    ]
