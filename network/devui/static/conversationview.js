// The conversation beside the timeline, and how the run ended.
//
// Messages have one shape for a live run (the page's AG-UI messages) and a stored thread
// (`messages` of /api/thread): role, content, the agent's name, tool calls, the call a tool
// message answers. Only the last MAX_SHOWN messages are drawn: a long thread keeps a small DOM.
//
// What is drawn is bounded and redrawn only where it changed, so a run that streams a long
// answer keeps the page responsive: a message's content is drawn up to CONTENT_LIMIT characters
// (then "show all" / "download"), a tool call's arguments up to CALL_LIMIT; each drawn message
// remembers what it drew, and a redraw (once per animation frame while a run streams) touches
// only the messages whose content, name or tool calls changed.

import { boundedText, el, iso } from "./dom.js";

const MAX_SHOWN = 300;
export const CONTENT_LIMIT = 4000;
const CALL_LIMIT = 1000;

const drawnIn = new WeakMap(); // box -> { items: Map(key -> drawn message), omittedNote }

function toolCallsOf(message) {
  // the page's own live messages carry AG-UI's wire shape; the server's, a flat one
  return (message.toolCalls || message.tool_calls || []).map((call) =>
    call.function ? { name: call.function.name, arguments: call.function.arguments } : call,
  );
}

// What a message's tool calls look like, cheaply: their names and how long their arguments are.
function callsSignature(calls) {
  return calls.map((call) => call.name + "\u0000" + (call.arguments || "").length).join("\u0001");
}

function cutText(text, limit) {
  return text.length > limit ? text.slice(0, limit) + " ... [" + (text.length - limit) + " more characters]" : text;
}

// A message's item, made once and updated in place.
function drawMessage(message) {
  const drawn = { message, name: null, content: null, calls: null }; // null: not drawn yet
  drawn.item = el("li", { class: "message role-" + message.role, "data-role": message.role });
  drawn.who = el("span", { class: "who" });
  drawn.text = boundedText("div", { class: "content" }, CONTENT_LIMIT, message.role + "-message.txt", () => drawn.message.content || "");
  drawn.callBox = el("div", { class: "calls" });
  drawn.item.append(drawn.who, drawn.text.element, drawn.callBox);
  return drawn;
}

function updateMessage(drawn, message) {
  drawn.message = message;
  const name = message.name || "";
  if (name !== drawn.name) {
    drawn.name = name;
    drawn.who.replaceChildren(message.role + (message.name ? " · " : ""), message.name ? iso(message.name) : "");
  }
  const content = message.content || "";
  if (content !== drawn.content) {
    drawn.content = content;
    drawn.text.element.hidden = !content;
    drawn.text.update(content);
  }
  const calls = toolCallsOf(message);
  const signature = callsSignature(calls);
  if (signature !== drawn.calls) {
    drawn.calls = signature;
    drawn.callBox.replaceChildren(
      ...calls.map((call) =>
        el("div", { class: "call" }, "→ ", iso(call.name), "(", iso(cutText(call.arguments || "", CALL_LIMIT)), ")"),
      ),
    );
  }
}

function keyOf(message, index) {
  return message.id ? message.role + "\u0000" + message.id : "#" + index;
}

export function renderConversation(box, messages, omitted = 0) {
  let drawn = drawnIn.get(box);
  if (!drawn) {
    drawn = { items: new Map(), note: el("li", { class: "summary-note" }) };
    drawnIn.set(box, drawn);
  }
  const start = Math.max(0, messages.length - MAX_SHOWN);
  const hidden = omitted + start;
  const wanted = [];
  const items = new Map();
  let note = "";
  if (hidden > 0) note = hidden + " earlier messages not shown";
  else if (!messages.length) note = "no message yet";
  if (note) {
    if (drawn.note.textContent !== note) drawn.note.textContent = note;
    wanted.push(drawn.note);
  }
  for (let index = start; index < messages.length; index++) {
    const message = messages[index];
    const key = keyOf(message, index);
    let entry = drawn.items.get(key);
    if (!entry || entry.message.role !== message.role) entry = drawMessage(message);
    updateMessage(entry, message);
    items.set(key, entry);
    wanted.push(entry.item);
  }
  drawn.items = items;
  // Messages already in place stay where they are (a streamed message's item is the same
  // node from its first delta to its last): only new ones are added, in the usual case.
  const current = box.children;
  const kept = wanted.length >= current.length && Array.prototype.every.call(current, (node, i) => node === wanted[i]);
  if (kept) box.append(...wanted.slice(current.length));
  else box.replaceChildren(...wanted);
}

// `outcome`: { stopReason?, summary?, output?, note? }
export function renderOutcome(box, outcome) {
  if (!outcome) return box.replaceChildren();
  const parts = [];
  if (outcome.stopReason) parts.push(el("div", { class: "stop-reason" }, "Stopped: ", iso(outcome.stopReason)));
  if (outcome.summary) parts.push(el("div", { class: "run-summary" }, "Summary: ", iso(outcome.summary)));
  if (outcome.note) parts.push(el("div", { class: "summary-note", text: outcome.note }));
  box.replaceChildren(...parts);
}
