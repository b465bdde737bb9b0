"""Reading a tool's description and parameter descriptions from its docstring.

Understands Google style (`Args:` then `name: text`), NumPy style (`Parameters` then
`name : type` with indented text) and Sphinx (`:param name: text`).
"""

from __future__ import annotations

import inspect
import re

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|Examples?|Notes?)\s*:?\s*$"
)
_GOOGLE_ARG = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ARG = re.compile(r"^\s*(\w+)\s*:\s*.*$")
_SPHINX_ARG = re.compile(r":param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and a description per parameter."""
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    params: dict[str, str] = {}
    for name, description in _SPHINX_ARG.findall(text):
        params[name] = description.strip()
    lines = text.splitlines()
    summary: list[str] = []
    section: str | None = None
    current: str | None = None
    # NumPy style: a section header underlined with dashes, each parameter on a line of its
    # own (`name : type`, the type optional, `a, b : int` for several) at the header's
    # indent, its text indented below. Read as Google style, `a: int` made "int" the text.
    numpy = False
    named: list[str] = []
    for line in lines:
        header = _SECTION.match(line)
        if header or set(line.strip()) == {"-"}:
            if header:
                section = header.group(1).lower()
                numpy = False
            else:
                numpy = section is not None
            current = None
            named = []
            continue
        if line.strip().startswith(":param") or line.strip().startswith(":return"):
            section = section or "sphinx"
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in ("args", "arguments", "parameters", "params"):
            continue
        if numpy:
            if line.strip() and not line[:1].isspace():
                named = [name.strip().lstrip("*") for name in line.split(":")[0].split(",")]
                named = [name for name in named if name]
                for name in named:
                    params[name] = ""
            elif line.strip():
                for name in named:
                    params[name] = (params[name] + " " + line.strip()).strip()
            continue
        google = _GOOGLE_ARG.match(line)
        indent = len(line) - len(line.lstrip())
        if google and indent <= 4 and google.group(1).lstrip("*") and google.group(3):
            current = google.group(1).lstrip("*")
            params[current] = google.group(3).strip()
        elif _NUMPY_ARG.match(line) and indent == 0:
            current = line.split(":")[0].strip()
            params[current] = ""
        elif current and line.strip():
            params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(summary).strip(), params
