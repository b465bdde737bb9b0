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

// A text that may be long, or grow while it streams (an answer, a message, a run's output):
// the page draws at most its first `limit` characters, and past them a "show all N characters"
// button and a "download" one (the whole text stays in memory, one click away). `update(text)`
// touches the page only when what is drawn changes: while a long text streams on, only the
// count on the button. After "show all", the new part of a growing text is appended as it
// comes. `whole()` gives the whole text at the time of a click.
//
// Returns `{ element, update }`: `element` holds the drawn text (a `tag` made with `attrs`)
// and, once the text is cut, the buttons.
export function boundedText(tag, attrs, limit, filename, whole) {
  const shown = el(tag, attrs);
  const element = el("span", { class: "bounded" }, shown); // inline: "Output: " stays beside it
  let drawn = ""; // what `shown` holds (without the " ..." of a cut text)
  let drawnCut = false;
  let actions = null;
  let opened = false; // "show all" was clicked
  const label = (text) => "show all " + text.length.toLocaleString("en") + " characters";
  function update(text) {
    if (opened) {
      if (text.startsWith(drawn)) shown.append(text.slice(drawn.length));
      else shown.textContent = text;
      drawn = text;
      return;
    }
    const cut = text.length > limit;
    const part = cut ? text.slice(0, limit) : text;
    if (part !== drawn || cut !== drawnCut) {
      shown.textContent = cut ? part + " ..." : part;
      drawn = part;
      drawnCut = cut;
    }
    if (text.length <= limit) {
      if (actions) actions.remove();
      actions = null;
    } else if (!actions) {
      actions = wholeActions(shown, filename, () => Promise.resolve(whole()), label(text));
      actions.querySelector(".show-whole").addEventListener("click", () => {
        opened = true;
        drawn = whole();
      });
      element.append(actions);
    } else {
      actions.querySelector(".show-whole").textContent = label(text);
    }
  }
  return { element, update };
}
