"""The dev UI's JSON Patch (network/devui/static/patch.js) applies RFC 6902 as written: each
operation's rules (RFC 6902 section 4), pointers with `~0` / `~1` (RFC 6901), the `-` index,
and a patch that fails in the middle leaves the document as it was (section 5). Run in Node,
as the page's ES module."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PATCH_JS = Path(__file__).resolve().parents[3] / "network" / "devui" / "static" / "patch.js"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")

ERROR = "error"

# (name, document, patch, the document after it or ERROR)
CASES: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    ("add a key", {"a": 1}, [{"op": "add", "path": "/b", "value": [2]}], {"a": 1, "b": [2]}),
    ("add replaces a key", {"a": 1}, [{"op": "add", "path": "/a", "value": 3}], {"a": 3}),
    ("add null", {}, [{"op": "add", "path": "/n", "value": None}], {"n": None}),
    (
        "add into an array",
        {"l": [1, 3]},
        [{"op": "add", "path": "/l/1", "value": 2}],
        {"l": [1, 2, 3]},
    ),
    (
        "add at the end by index",
        {"l": [1]},
        [{"op": "add", "path": "/l/1", "value": 2}],
        {"l": [1, 2]},
    ),
    ("add with -", {"l": [1]}, [{"op": "add", "path": "/l/-", "value": [2]}], {"l": [1, [2]]}),
    ("add past the end", {"l": [1]}, [{"op": "add", "path": "/l/3", "value": 2}], ERROR),
    (
        "a leading zero is no index",
        {"l": [1, 2]},
        [{"op": "add", "path": "/l/01", "value": 0}],
        ERROR,
    ),
    ("a negative is no index", {"l": [1]}, [{"op": "add", "path": "/l/-1", "value": 0}], ERROR),
    ("a word is no index", {"l": [1]}, [{"op": "replace", "path": "/l/length", "value": 0}], ERROR),
    (
        "- names no item to replace",
        {"l": [1]},
        [{"op": "replace", "path": "/l/-", "value": 0}],
        ERROR,
    ),
    ("- as an object key", {"o": {}}, [{"op": "add", "path": "/o/-", "value": 1}], {"o": {"-": 1}}),
    ("add under a missing parent", {}, [{"op": "add", "path": "/a/b", "value": 1}], ERROR),
    ("add under a scalar", {"a": 1}, [{"op": "add", "path": "/a/b", "value": 1}], ERROR),
    ("add without a value", {}, [{"op": "add", "path": "/a"}], ERROR),
    ("add the whole document", {"a": 1}, [{"op": "add", "path": "", "value": {"b": 2}}], {"b": 2}),
    ("~1 is a slash", {}, [{"op": "add", "path": "/a~1b", "value": 1}], {"a/b": 1}),
    ("~0 is a tilde", {}, [{"op": "add", "path": "/m~0n", "value": 1}], {"m~n": 1}),
    ("~01 is ~1, not a slash", {}, [{"op": "add", "path": "/~01", "value": 1}], {"~1": 1}),
    ("the empty key", {}, [{"op": "add", "path": "/", "value": 1}], {"": 1}),
    (
        "__proto__ is a key",
        {},
        [{"op": "add", "path": "/__proto__", "value": {"x": 1}}],
        {"__proto__": {"x": 1}},
    ),
    ("remove a key", {"a": 1, "b": 2}, [{"op": "remove", "path": "/a"}], {"b": 2}),
    ("remove an item", {"l": [1, 2, 3]}, [{"op": "remove", "path": "/l/1"}], {"l": [1, 3]}),
    ("remove a missing key", {"a": 1}, [{"op": "remove", "path": "/b"}], ERROR),
    ("remove past the end", {"l": [1]}, [{"op": "remove", "path": "/l/1"}], ERROR),
    ("remove the whole document", {"a": 1}, [{"op": "remove", "path": ""}], ERROR),
    (
        "replace a key",
        {"a": 1},
        [{"op": "replace", "path": "/a", "value": {"b": 1}}],
        {"a": {"b": 1}},
    ),
    ("replace a missing key", {"a": 1}, [{"op": "replace", "path": "/b", "value": 1}], ERROR),
    (
        "replace an item",
        {"l": [1, 2]},
        [{"op": "replace", "path": "/l/0", "value": 9}],
        {"l": [9, 2]},
    ),
    ("replace the whole document", {"a": 1}, [{"op": "replace", "path": "", "value": [1]}], [1]),
    (
        "move a key",
        {"a": 1, "b": {}},
        [{"op": "move", "from": "/a", "path": "/b/a"}],
        {"b": {"a": 1}},
    ),
    (
        "move an item",
        {"l": [1, 2, 3]},
        [{"op": "move", "from": "/l/0", "path": "/l/2"}],
        {"l": [2, 3, 1]},
    ),
    ("move to -", {"l": [1, 2]}, [{"op": "move", "from": "/l/0", "path": "/l/-"}], {"l": [2, 1]}),
    ("move past the end", {"l": [1, 2]}, [{"op": "move", "from": "/l/0", "path": "/l/2"}], ERROR),
    (
        "move into its own child",
        {"a": {"b": {}}},
        [{"op": "move", "from": "/a", "path": "/a/b/c"}],
        ERROR,
    ),
    ("move to itself", {"a": 1}, [{"op": "move", "from": "/a", "path": "/a"}], {"a": 1}),
    ("move from nowhere", {"a": 1}, [{"op": "move", "from": "/x", "path": "/y"}], ERROR),
    ("move without from", {"a": 1}, [{"op": "move", "path": "/y"}], ERROR),
    (
        "copy a value",
        {"a": [1]},
        [{"op": "copy", "from": "/a", "path": "/b"}],
        {"a": [1], "b": [1]},
    ),
    ("copy from nowhere", {"a": 1}, [{"op": "copy", "from": "/x", "path": "/y"}], ERROR),
    (
        "copy under a missing parent",
        {"a": 1},
        [{"op": "copy", "from": "/a", "path": "/x/y"}],
        ERROR,
    ),
    (
        "test passes",
        {"a": {"x": 1, "y": [1, "2"]}},
        [{"op": "test", "path": "/a", "value": {"y": [1, "2"], "x": 1}}],
        {"a": {"x": 1, "y": [1, "2"]}},
    ),
    ("test a number against text", {"a": 1}, [{"op": "test", "path": "/a", "value": "1"}], ERROR),
    ("test null against missing", {}, [{"op": "test", "path": "/a", "value": None}], ERROR),
    ("test array order", {"a": [1, 2]}, [{"op": "test", "path": "/a", "value": [2, 1]}], ERROR),
    (
        "test extra key",
        {"a": {"x": 1}},
        [{"op": "test", "path": "/a", "value": {"x": 1, "y": 2}}],
        ERROR,
    ),
    (
        "test the whole document",
        {"a": 1},
        [{"op": "test", "path": "", "value": {"a": 1}}],
        {"a": 1},
    ),
    ("test an ~1 key", {"a/b": 1}, [{"op": "test", "path": "/a~1b", "value": 1}], {"a/b": 1}),
    ("an unknown op", {"a": 1}, [{"op": "merge", "path": "/a", "value": 2}], ERROR),
    ("no op", {"a": 1}, [{"path": "/a", "value": 2}], ERROR),
    ("no path", {"a": 1}, [{"op": "add", "value": 2}], ERROR),
    ("a path not a pointer", {"a": 1}, [{"op": "add", "path": "a", "value": 2}], ERROR),
    ("an operation not an object", {"a": 1}, ["add"], ERROR),
    (
        "a failure midway keeps the document",
        {"a": 1, "l": [1]},
        [
            {"op": "add", "path": "/b", "value": 2},
            {"op": "remove", "path": "/l/0"},
            {"op": "test", "path": "/a", "value": 5},
        ],
        ERROR,
    ),
    (
        "operations see each other",
        {"l": []},
        [
            {"op": "add", "path": "/l/-", "value": {"n": 1}},
            {"op": "copy", "from": "/l/0", "path": "/l/-"},
            {"op": "replace", "path": "/l/1/n", "value": 2},
            {"op": "test", "path": "/l", "value": [{"n": 1}, {"n": 2}]},
        ],
        {"l": [{"n": 1}, {"n": 2}]},
    ),
]

RUNNER = """
import { readFileSync } from "node:fs";
import { applyOp, applyPatch } from %s;
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const [name, doc, patch] of cases) {
  const before = JSON.stringify(doc);
  const entry = { name };
  try {
    entry.result = applyPatch(doc, patch);
  } catch (error) {
    entry.error = String(error.message);
  }
  entry.untouched = JSON.stringify(doc) === before;
  // applyOp alone: an operation that throws leaves the document as it was
  const single = JSON.parse(before);
  try {
    applyOp(single, patch[0]);
  } catch {
    entry.opUntouched = JSON.stringify(single) === before;
  }
  out.push(entry);
}
console.log(JSON.stringify(out));
"""


def run_cases() -> list[dict[str, Any]]:
    script = RUNNER % json.dumps(PATCH_JS.as_uri())
    cases = json.dumps([[name, doc, patch] for name, doc, patch, _ in CASES])
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=cases,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in run_cases()}


@pytest.mark.parametrize(
    ("name", "expected"), [(c[0], c[3]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_operation_follows_rfc_6902(
    outcomes: dict[str, dict[str, Any]], name: str, expected: Any
) -> None:
    entry = outcomes[name]
    assert entry["untouched"], "applyPatch changed the document it was given"
    if expected == ERROR:
        assert "error" in entry, f"applied: {entry.get('result')!r}"
        assert entry["error"]  # says why
        if "opUntouched" in entry:
            assert entry["opUntouched"], "a failing operation changed the document"
    else:
        assert "error" not in entry, entry.get("error")
        assert entry["result"] == expected
