// A step's change as a diff, and the state after it: collapsed, children rendered when a key
// is opened, MAX_CHILDREN at a time.

import { el, longPre } from "./dom.js";
import { changeKind, describe, displayPath, keyOf, preview, tokens } from "./patch.js";

const MAX_CHILDREN = 100;
const MAX_DIFF_ROWS = 500;

export function renderDiff(changes) {
  const box = el("div", { id: "detail-diff" });
  if (!changes.length) box.append(el("div", { class: "summary-note", text: "no change" }));
  for (const [op, before] of changes.slice(0, MAX_DIFF_ROWS)) {
    const kind = changeKind(op, before);
    let text;
    const where = displayPath(op.path);
    if (kind === "add") text = "+ " + where + " = " + preview(op.value);
    else if (kind === "remove") text = "- " + where + " (was " + preview(before) + ")";
    else text = "~ " + where + ": " + preview(before) + " → " + preview(op.value);
    box.append(el("div", { class: "diff-row op-" + kind, "data-key": keyOf(op.path), text }));
  }
  if (changes.length > MAX_DIFF_ROWS) {
    box.append(el("div", { class: "summary-note", text: changes.length - MAX_DIFF_ROWS + " more operations" }));
  }
  return box;
}

export function renderState(state, changes, onKey) {
  const touched = new Map();
  for (const [op, before] of changes) {
    const key = keyOf(op.path);
    const kind = tokens(op.path).length > 1 ? "replace" : changeKind(op, before);
    if (!touched.has(key) || kind !== "replace") touched.set(key, kind);
  }
  const box = el("div", { id: "detail-state" });
  const keys = Object.keys(state);
  for (const [key, kind] of touched) {
    if (kind === "remove" && !(key in state)) {
      box.append(el("div", { class: "state-key touched-remove", "data-key": key }, keyLink(key, onKey), el("span", { class: "summary-note", text: " removed" })));
    }
  }
  appendChildren(box, keys, (key) => stateEntry(key, state[key], touched.get(key), onKey));
  return box;
}

function keyLink(key, onKey) {
  return el("span", {
    class: "key-name",
    text: key,
    onclick: (event) => {
      event.preventDefault();
      onKey(key);
    },
  });
}

// `onKey` given: a top-level key, whose name opens its history; else a key inside a value.
function stateEntry(key, value, kind, onKey) {
  const topLevel = onKey !== undefined;
  const attrs = { class: "state-key" + (kind ? " touched-" + kind : "") };
  if (topLevel) attrs["data-key"] = key;
  const name = topLevel ? keyLink(key, onKey) : el("span", { text: key });
  const entry = el("details", attrs, el("summary", {}, name, el("span", { class: "summary-note", text: "  " + describe(value) })));
  let filled = false;
  entry.addEventListener("toggle", () => {
    if (!entry.open || filled) return;
    filled = true;
    if (value !== null && typeof value === "object") {
      const tree = el("div", { class: "tree" });
      appendChildren(tree, Object.keys(value), (k) => stateEntry(k, value[k], null));
      entry.append(tree);
    } else {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      entry.append(longPre(text, undefined, String(key) + ".txt"));
    }
  });
  return entry;
}

function appendChildren(box, keys, make) {
  let shown = 0;
  const more = () => {
    const end = Math.min(keys.length, shown + MAX_CHILDREN);
    const items = [];
    for (; shown < end; shown++) items.push(make(keys[shown]));
    button.before(...items);
    button.hidden = shown >= keys.length;
    button.textContent = "show " + Math.min(MAX_CHILDREN, keys.length - shown) + " more of " + (keys.length - shown);
  };
  const button = el("button", { type: "button", class: "more", onclick: more });
  box.append(button);
  more();
}

// -- history_of(key) -----------------------------------------------------------------------
