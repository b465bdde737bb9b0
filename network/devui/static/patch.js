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
    if (!Object.prototype.hasOwnProperty.call(node, token)) return undefined;
    node = node[token];
  }
  return node;
}

function parentOf(doc, path) {
  const parts = tokens(path);
  if (!parts.length) throw new Error("cannot change the whole document");
  let node = doc;
  for (const token of parts.slice(0, -1)) {
    if (node === null || typeof node !== "object" || !Object.prototype.hasOwnProperty.call(node, token)) {
      throw new Error("no such path: " + path);
    }
    node = node[token];
  }
  return [node, parts[parts.length - 1]];
}

export function applyOp(doc, op) {
  if (op.op === "test") return;
  if (op.op === "move" || op.op === "copy") {
    const value = clone(getPath(doc, op.from));
    if (op.op === "move") applyOp(doc, { op: "remove", path: op.from });
    applyOp(doc, { op: "add", path: op.path, value });
    return;
  }
  const [parent, last] = parentOf(doc, op.path);
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (op.op === "add") parent.splice(index, 0, clone(op.value));
    else if (op.op === "replace") parent[index] = clone(op.value);
    else if (op.op === "remove") parent.splice(index, 1);
  } else if (op.op === "remove") {
    delete parent[last];
  } else {
    setOwn(parent, last, clone(op.value));
  }
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
