// The conversation beside the timeline, and how the run ended.
//
// Messages have one shape for a live run (the page's AG-UI messages) and a stored thread
// (`messages` of /api/thread): role, content, the agent's name, tool calls, the call a tool
// message answers. Only the last MAX_SHOWN messages are drawn: a long thread keeps a small DOM.

import { el, iso } from "./dom.js";

const MAX_SHOWN = 300;

function toolCallsOf(message) {
  // the page's own live messages carry AG-UI's wire shape; the server's, a flat one
  return (message.toolCalls || message.tool_calls || []).map((call) =>
    call.function ? { name: call.function.name, arguments: call.function.arguments } : call,
  );
}

export function renderConversation(box, messages, omitted = 0) {
  const shown = messages.slice(-MAX_SHOWN);
  const hidden = omitted + messages.length - shown.length;
  const items = [];
  if (hidden > 0) items.push(el("li", { class: "summary-note", text: hidden + " earlier messages not shown" }));
  if (!shown.length) items.push(el("li", { class: "summary-note", text: "no message yet" }));
  for (const message of shown) {
    const item = el("li", { class: "message role-" + message.role, "data-role": message.role });
    const who = message.role + (message.name ? " · " : "");
    item.append(el("span", { class: "who" }, who, message.name ? iso(message.name) : null));
    if (message.content) item.append(el("div", { class: "content", text: message.content }));
    for (const call of toolCallsOf(message)) {
      item.append(el("div", { class: "call" }, "→ ", iso(call.name), "(", iso(call.arguments || ""), ")"));
    }
    items.push(item);
  }
  box.replaceChildren(...items);
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
