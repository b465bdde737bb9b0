// Building the page's elements. Text is only ever set as textContent, never parsed as HTML.

export const MAX_SHOWN_TEXT = 100000;

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("data-")) node.setAttribute(name, value);
    else node[name] = value;
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

// A value from the server (an id, a name, a message) inside text of the page's own: `<bdi>`
// keeps its direction controls (a right-to-left override in a thread id) from reversing the
// text around it.
export function iso(value) {
  return el("bdi", { text: String(value) });
}

// An element's text made of the page's words and values: strings as they are, values isolated.
export function setText(node, ...parts) {
  node.replaceChildren(...parts.map((part) => (typeof part === "string" ? part : iso(part.value))));
}

// A part of `setText` that came from the server.
export const served = (v) => ({ value: v });

export function randomId(prefix) {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return prefix + "_" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function section(title, ...children) {
  return el("div", { class: "part" }, el("h3", { text: title }), ...children);
}

export function pre(text, className) {
  const value = text.length > MAX_SHOWN_TEXT ? text.slice(0, MAX_SHOWN_TEXT) + " ..." : text;
  return el("pre", { class: className, text: value });
}
