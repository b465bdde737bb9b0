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

// A value that may be longer than the page shows at once: the first MAX_SHOWN_TEXT characters,
// then a button that shows it whole and one that downloads it as a file. `whole`, when the
// server cut the text before sending it, fetches the whole text (a Promise of it).
export function longPre(text, className, filename = "value.txt", whole = null) {
  const shown = pre(text, className);
  if (whole === null && text.length <= MAX_SHOWN_TEXT) return shown;
  const label = whole ? "show all" : "show all " + text.length.toLocaleString("en") + " characters";
  return el("div", { class: "long-value" }, shown, wholeActions(shown, filename, whole || (() => Promise.resolve(text)), label));
}

// "show all" (into `shown`) and "download" buttons for a text `full()` gives whole.
export function wholeActions(shown, filename, full, label = "show all") {
  const showAll = el("button", {
    type: "button",
    class: "show-whole",
    text: label,
    onclick: async () => {
      shown.textContent = await full();
      showAll.remove();
    },
  });
  const download = el("button", {
    type: "button",
    class: "download",
    text: "download",
    onclick: async () => {
      const url = URL.createObjectURL(new Blob([await full()], { type: "text/plain;charset=utf-8" }));
      const link = el("a", { href: url, download: filename });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    },
  });
  return el("div", { class: "long-actions" }, showAll, " ", download);
}
