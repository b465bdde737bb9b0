// JSON Pointer (RFC 6901) and JSON Patch (RFC 6902) on plain JSON values, and bounded
// descriptions of values that may be megabytes large.

const MAX_PREVIEW = 300;

export const clone = (value) => (value === undefined ? undefined : structuredClone(value));

// -- JSON Pointer and Patch (RFC 6901 / 6902) ---------------------------------------------

export function tokens(path) {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new Error("not a JSON Pointer: " + path);
  return path.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export function keyOf(path) {
  const parts = tokens(path);
  return parts.length ? parts[0] : "";
}

// `/files/a~1b.py` shown as `files["a/b.py"]`: the key, then each step into it, decoded.
export function displayPath(path) {
  return tokens(path)
    .map((token, i) => (i === 0 ? escapeDirection(token) : "[" + escapeDirection(JSON.stringify(token)) + "]"))
    .join("");
}

export function getPath(doc, path) {
  let node = doc;
  for (const token of tokens(path)) {
    if (node === null || typeof node !== "object") return undefined;
    if (Array.isArray(node) ? !isIndex(token, node.length - 1) : !Object.prototype.hasOwnProperty.call(node, token)) {
      return undefined;
    }
    node = node[Array.isArray(node) ? Number(token) : token];
  }
  return node;
}

// An array index as RFC 6901 writes it (digits, no leading zero), at most `max`.
function isIndex(token, max) {
  return /^(0|[1-9][0-9]*)$/.test(token) && Number(token) <= max;
}

const OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);

// One operation applied as RFC 6902 says, returning the document after it (a new one when the
// operation's path is "", the whole document). An operation that cannot apply (an unknown
// `op`, a missing `value` or `from`, a path that does not exist, a bad array index, a
// failed `test`, a move into its own child) throws and leaves `doc` as it was.
export function applyOp(doc, op) {
  if (op === null || typeof op !== "object" || !OPS.has(op.op)) {
    throw new Error("not a JSON Patch operation: " + preview(op, 80));
  }
  if (typeof op.path !== "string") throw new Error(op.op + ": no path");
  const needsValue = op.op === "add" || op.op === "replace" || op.op === "test";
  if (needsValue && !Object.prototype.hasOwnProperty.call(op, "value")) {
    throw new Error(op.op + " " + op.path + ": no value");
  }
  if (op.op === "test") {
    if (!sameJSON(found(doc, op.path, op), op.value)) throw new Error("test " + op.path + ": the value differs");
    return doc;
  }
  if (op.op === "move" || op.op === "copy") {
    if (typeof op.from !== "string") throw new Error(op.op + " " + op.path + ": no from");
    const value = clone(found(doc, op.from, op));
    if (op.op === "move") {
      if (op.from === op.path) return doc;
      if (op.path.startsWith(op.from + "/")) throw new Error("move " + op.from + ": into its own child " + op.path);
      const trial = clone(doc); // the target is checked as the document is once `from` is gone
      check(change(trial, { op: "remove", path: op.from }), { op: "add", path: op.path });
      doc = change(doc, { op: "remove", path: op.from });
    } else {
      check(doc, { op: "add", path: op.path });
    }
    return change(doc, { op: "add", path: op.path, value });
  }
  check(doc, op);
  return change(doc, { op: op.op, path: op.path, value: clone(op.value) });
}

// A whole patch, all or nothing: the new document, or an error and `doc` untouched.
export function applyPatch(doc, ops) {
  if (!Array.isArray(ops)) throw new Error("a JSON Patch is an array of operations");
  let result = clone(doc);
  for (const op of ops) result = applyOp(result, op);
  return result;
}

// The value at `path`, which must exist (for `test`, `move` and `copy`'s `from`).
function found(doc, path, op) {
  const value = getPath(doc, path);
  if (value === undefined) throw new Error(op.op + ": no value at " + path);
  return value;
}

// Throws unless `op` (add, remove or replace) can apply to `doc`.
function check(doc, op) {
  const parts = tokens(op.path);
  if (!parts.length) {
    if (op.op === "remove") throw new Error("remove: cannot remove the whole document");
    return;
  }
  const parent = getPath(doc, op.path.slice(0, op.path.lastIndexOf("/")));
  if (parent === null || typeof parent !== "object") throw new Error(op.op + " " + op.path + ": no such path");
  const last = parts[parts.length - 1];
  if (Array.isArray(parent)) {
    const ok = op.op === "add" ? last === "-" || isIndex(last, parent.length) : isIndex(last, parent.length - 1);
    if (!ok) throw new Error(op.op + " " + op.path + ": not an index of an array of " + parent.length);
  } else if (op.op !== "add" && !Object.prototype.hasOwnProperty.call(parent, last)) {
    throw new Error(op.op + " " + op.path + ": no such key");
  }
}

// Apply a checked add, remove or replace; returns the document.
function change(doc, op) {
  const parts = tokens(op.path);
  if (!parts.length) return op.value; // add or replace of the whole document
  const parent = getPath(doc, op.path.slice(0, op.path.lastIndexOf("/")));
  const last = parts[parts.length - 1];
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (op.op === "add") parent.splice(index, 0, op.value);
    else if (op.op === "replace") parent[index] = op.value;
    else parent.splice(index, 1);
  } else if (op.op === "remove") {
    delete parent[last];
  } else {
    setOwn(parent, last, op.value);
  }
  return doc;
}

// JSON equality: objects by their keys whatever the order, arrays item by item.
function sameJSON(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, i) => sameJSON(item, b[i]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameJSON(a[k], b[k]));
}

// A key set as the object's own property whatever its name: `parent[key] = value` with the key
// `__proto__` would replace the object's prototype instead, and the key would vanish.
export function setOwn(parent, key, value) {
  Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

// Unicode's explicit direction controls (embeddings, overrides, isolates, marks): shown as
// escapes in JSON previews, so a value cannot reverse the text that follows it on screen.
const DIRECTION_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function escapeDirection(text) {
  return text.replace(DIRECTION_CONTROLS, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

// -- bounded descriptions of values --------------------------------------------------------

export function describe(value) {
  if (Array.isArray(value)) return "array, " + value.length + " items";
  if (value !== null && typeof value === "object") {
    let count = 0;
    for (const _ in value) count++;
    return "object, " + count + " keys";
  }
  if (typeof value === "string") return "string, " + value.length + " chars";
  return String(value);
}

export function preview(value, limit = MAX_PREVIEW) {
  if (value === undefined) return "(none)";
  let out = "";
  const walk = (v) => {
    if (out.length > limit) return;
    if (typeof v === "string") {
      out += escapeDirection(JSON.stringify(v.length > limit ? v.slice(0, limit) : v));
    } else if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length && out.length <= limit; i++) {
        if (i) out += ", ";
        walk(v[i]);
      }
      out += "]";
    } else if (v !== null && typeof v === "object") {
      out += "{";
      let first = true;
      for (const k in v) {
        if (out.length > limit) break;
        if (!first) out += ", ";
        first = false;
        out += escapeDirection(JSON.stringify(k)) + ": ";
        walk(v[k]);
      }
      out += "}";
    } else {
      out += String(v);
    }
  };
  walk(value);
  return out.length > limit ? out.slice(0, limit) + " ..." : out;
}

// How an operation changed its path: "add" (nothing was there), "replace" or "remove".
export function changeKind(op, before) {
  if (op.op === "remove") return "remove";
  if (op.op === "add" && before === undefined) return "add";
  return "replace";
}
