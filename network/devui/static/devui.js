// The agent-network dev UI: one page, no build step, no library (ES modules of this folder).
//
// A run is started from the chat box with a POST to the AG-UI endpoint (/agui/), whose
// text/event-stream answer is read with fetch + ReadableStream (sse.js). A stored thread is
// fetched as JSON (/api/thread) and replayed with the same views.
//
// Large runs stay usable: the timeline only renders the rows in view (virtualised); the state
// after a step and its diff are computed when the step is opened, by applying the JSON Patch
// operations from the run's baseline (moving forward from the last step computed); the state
// is shown collapsed (stateview.js). Text from the server is only ever set as textContent.
//
// Whatever a run says, the page stays responsive: while a run streams, the page is redrawn at
// most once per animation frame, and only where something changed (a timeline row's text, a
// message's content, the open step's answer); long texts are drawn cut, with "show all" and
// "download" (dom.js `boundedText`): a streamed answer, the conversation's messages, the output.

import { $, boundedText, el, iso, longPre, pre, randomId, section, served, setText, wholeActions } from "./dom.js";
import { renderConversation, renderOutcome } from "./conversationview.js";
import { drawGraph } from "./graphview.js";
import { applyOp, clone, getPath } from "./patch.js";
import { fetchJSON, readEvents } from "./sse.js";
import { renderDiff, renderState } from "./stateview.js";
import { timeTravelSection } from "./timetravel.js";

const ROW_HEIGHT = 28;
const OVERSCAN = 6;
const STEP_EVENT = "agent_network.devui.step";
const ANSWER_LIMIT = 20000; // characters of a live step's answer drawn (the server cuts a stored one so)
const OUTPUT_LIMIT = 1000; // characters of a run's output drawn (its whole is in the last step)

// -- the session: a live thread, or a stored thread being replayed ------------------------

function liveSession() {
  return {
    kind: "live",
    threadId: randomId("thread"),
    steps: [],
    segments: [],
    segment: null,
    pendingOps: [],
    messages: [],
    state: {},
    interrupts: [],
    decisions: new Map(),
    running: false,
    runs: 0,
    current: null,
    toolCalls: new Map(),
    cursor: null,
  };
}

let session = liveSession();
let selected = null;
let detailAnswer = null; // the open live step's answer: { step, view } (a boundedText)
let drawnRows = new Map(); // timeline rows drawn: index -> { step, row, cls, title, meta }
let graphNodes = new Map();
let renderQueued = false;
let serverInfo = { runs_on_store: false }; // GET /api/server

// GET a JSON view: `{ ok, body, message }`, never throwing (see `fetchJSON`).
const getJSON = (url) => fetchJSON(url);

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = kind || "";
}

function showError(message) {
  $("errors").append(el("div", { class: "error" }, iso(message)));
}

// -- state at a step, computed on demand ---------------------------------------------------

// The state after step `index`; `capture(op, before)` sees each of that step's own
// operations with the value its path held just before it.
function stateAfter(index, capture) {
  const step = session.steps[index];
  const segment = step.segment;
  let cursor = session.cursor;
  if (!cursor || cursor.segment !== segment || cursor.index > index || (capture && cursor.index >= index)) {
    cursor = { segment, index: segment.first - 1, state: clone(segment.baseline) };
  }
  for (let j = cursor.index + 1; j <= index; j++) {
    const s = session.steps[j];
    for (const op of s.preOps) cursor.state = safeApply(cursor.state, op, s);
    for (const op of s.ops) {
      if (j === index && capture) capture(op, getPath(cursor.state, op.path));
      cursor.state = safeApply(cursor.state, op, s);
    }
  }
  cursor.index = index;
  session.cursor = cursor;
  return cursor.state;
}

// The document after `op`; one that does not apply is noted on the step and changes nothing.
function safeApply(doc, op, step) {
  try {
    return applyOp(doc, op);
  } catch (error) {
    step.applyError = String(error.message || error);
    return doc;
  }
}

// -- graph ---------------------------------------------------------------------------------

async function loadGraph() {
  const answer = await getJSON("/api/graph");
  if (!answer.ok) return showError("could not load the network's graph: " + answer.message);
  const graph = answer.body;
  setText($("network-name"), served(graph.name));
  document.title = "agent-network dev UI: " + graph.name;
  graphNodes = new Map();
  drawGraph($("graph"), graph, (node) => {
    const item = el("span", { class: "node " + node.shape, text: node.label, "data-node": node.id });
    if (node.agent) {
      item.setAttribute("data-agent", node.agent);
      graphNodes.set(node.agent, item);
    }
    return item;
  });
  // the same edges as text, for a screen reader and for copying
  const labels = new Map(graph.nodes.map((node) => [node.id, node.label]));
  const edges = $("edges");
  edges.replaceChildren();
  for (const edge of graph.edges.slice(0, 200)) {
    const arrow = edge.dotted ? " ⇢ " : " → ";
    const item = el("li", {});
    setText(item, served(labels.get(edge.source)), arrow, served(labels.get(edge.target)));
    if (edge.label) item.append(" (", iso(edge.label), ")");
    edges.append(item);
  }
}

// `running`: the agent whose call is under way in a live run; `selected`: the agent of the
// step opened (a replay, or a live run once it is over).
function highlight(agent, kind = "running") {
  for (const [name, node] of graphNodes) {
    node.classList.toggle("running", kind === "running" && name === agent);
    node.classList.toggle("selected", kind === "selected" && name === agent);
  }
}

// -- timeline (virtualised) ----------------------------------------------------------------

function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderTimeline();
    renderConversation($("conversation"), session.messages, session.messagesOmitted || 0);
    if (detailAnswer && detailAnswer.view.element.isConnected) detailAnswer.view.update(detailAnswer.step.answer);
  });
}

function rowText(step) {
  const previous = session.steps[step.index - 1];
  const parts = ["#" + step.index, step.agent];
  if (step.run !== undefined && (!previous || previous.run !== step.run)) {
    parts.push("▸ run " + step.run); // the first call of a run
  }
  const meta = [];
  if (step.durationMs !== undefined) meta.push((step.durationMs / 1000).toFixed(2) + "s");
  if (step.usage) meta.push(step.usage.total_tokens + " tok");
  if (step.toolCalls.length) meta.push(step.toolCalls.map((c) => c.name).join(", "));
  if (step.ops.length) meta.push(step.ops.length + " state ops");
  return [parts.join(" "), meta.join(" · ")];
}

// Only the rows in view exist; each is made once and its class and texts are set only when
// they change, so a frame of a streaming run costs a few comparisons.
function renderTimeline() {
  const timeline = $("timeline");
  const spacer = $("timeline-spacer");
  const steps = session.steps;
  const height = steps.length * ROW_HEIGHT + "px";
  if (spacer.style.height !== height) spacer.style.height = height;
  const count = "(" + steps.length + " steps)";
  if ($("step-count").textContent !== count) $("step-count").textContent = count;
  const first = Math.max(0, Math.floor(timeline.scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(
    steps.length - 1,
    Math.ceil((timeline.scrollTop + timeline.clientHeight) / ROW_HEIGHT) + OVERSCAN,
  );
  const rows = new Map();
  for (let i = first; i <= last; i++) {
    const step = steps[i];
    const [title, meta] = rowText(step);
    const cls = "row " + step.status + (selected === i ? " selected" : "");
    let drawn = drawnRows.get(i);
    if (!drawn || drawn.step !== step) {
      const row = el("div", { "data-index": String(i) }, el("span", { class: "title" }), el("span", { class: "meta" }));
      row.style.top = i * ROW_HEIGHT + "px";
      drawn = { step, row, cls: null, title: null, meta: null };
    }
    if (drawn.cls !== cls) drawn.row.className = drawn.cls = cls;
    if (drawn.title !== title) drawn.row.firstChild.textContent = drawn.title = title;
    if (drawn.meta !== meta) drawn.row.lastChild.textContent = drawn.meta = meta;
    rows.set(i, drawn);
  }
  for (const [i, drawn] of drawnRows) if (rows.get(i) !== drawn) drawn.row.remove();
  for (const drawn of rows.values()) if (drawn.row.parentNode !== spacer) spacer.append(drawn.row);
  drawnRows = rows;
}

function followTail() {
  const timeline = $("timeline");
  const atBottom = timeline.scrollTop + timeline.clientHeight >= timeline.scrollHeight - ROW_HEIGHT * 2;
  if (atBottom) timeline.scrollTop = session.steps.length * ROW_HEIGHT;
}

// -- step detail ---------------------------------------------------------------------------

function openStep(index) {
  if (index < 0 || index >= session.steps.length) return;
  selected = index;
  const step = session.steps[index];
  if (session.kind === "replay" || !session.running) highlight(step.agent, "selected");
  const changes = [];
  const state = stateAfter(index, (op, before) => changes.push([op, before]));
  renderDetail(step, state, changes);
  renderTimeline();
}

function renderDetail(step, state, changes) {
  setText($("detail-title"), "Step #" + step.index + ": ", served(step.agent));
  const body = [];
  const nav = el(
    "div",
    { class: "nav" },
    el("button", { type: "button", id: "step-prev", text: "◀ previous", onclick: () => openStep(step.index - 1) }),
    el("button", { type: "button", id: "step-next", text: "next ▶", onclick: () => openStep(step.index + 1) }),
  );
  body.push(nav);
  const facts = [];
  if (step.durationMs !== undefined) facts.push("duration " + (step.durationMs / 1000).toFixed(3) + "s");
  if (step.usage) {
    facts.push(
      "tokens " + step.usage.prompt_tokens + " prompt + " + step.usage.completion_tokens +
        " completion = " + step.usage.total_tokens,
    );
  }
  body.push(el("div", { id: "detail-usage", text: facts.join(" · ") || step.status }));
  if (step.input) body.push(section("Run input", longPre(step.input, undefined, "input.txt", wholeText(step, "input"))));
  if (step.prompt) {
    const prompt = longPre(step.prompt, undefined, "prompt.txt", wholeText(step, "prompt"));
    body.push(el("details", { id: "detail-prompt" }, el("summary", { text: "Prompt (system instructions)" }), prompt));
  }
  const noText = step.status === "running" ? "" : "(no text: the model answered with tool calls)";
  const answerCut = wholeText(step, "answer");
  detailAnswer = null;
  if (answerCut) {
    const shown = pre(step.answer || noText, "answer");
    shown.id = "detail-answer";
    body.push(section("Answer", shown, wholeActions(shown, "answer.txt", answerCut)));
  } else {
    // a live step's answer may still be streaming: redrawn with the page, cut when long
    const view = boundedText("pre", { class: "answer", id: "detail-answer" }, ANSWER_LIMIT, "answer.txt", () => step.answer || "");
    view.update(step.answer || noText);
    if (step.status === "running") detailAnswer = { step, view };
    body.push(section("Answer", view.element));
  }
  const tools = el("div", { id: "detail-tools" });
  for (const call of step.toolCalls) {
    const failed = call.isError || (typeof call.result === "string" && /^(Error|Rejected):/.test(call.result));
    tools.append(
      el(
        "div",
        { class: "tool" + (failed ? " failed" : ""), "data-tool": call.name },
        el("strong", { text: call.name }),
        el("span", { class: "summary-note", text: call.durationMs !== undefined ? " " + call.durationMs.toFixed(1) + " ms" : "" }),
        longPre("arguments: " + (call.args || ""), undefined, call.name + "-arguments.txt", wholeText(step, "arguments", call)),
        longPre(
          "result: " + (call.result === null || call.result === undefined ? "(waiting)" : call.result),
          undefined,
          call.name + "-result.txt",
          wholeText(step, "result", call),
        ),
      ),
    );
  }
  if (step.toolCalls.length) body.push(section("Tool calls", tools));
  body.push(section("State change (JSON Patch)", renderDiff(changes)));
  if (step.applyError) body.push(el("div", { class: "error" }, "a state operation did not apply: ", iso(step.applyError)));
  body.push(section("State after the step", renderState(state, changes, showHistory)));
  if (session.kind === "replay") {
    body.push(
      timeTravelSection({
        threadId: session.threadId,
        step: step.index,
        state,
        openThread,
        refreshThreads: loadThreads,
        showError,
      }),
    );
  }
  $("detail-body").replaceChildren(...body);
}

// For a text the server cut (a stored step's), a function fetching it whole; else null.
function wholeText(step, part, call) {
  const cut = call ? call.cut : step.cut;
  if (session.kind !== "replay" || !cut || !cut.includes(part)) return null;
  const query = { thread: session.threadId, step: String(step.index), part };
  if (call) query.call = call.id;
  return async () => {
    const response = await fetch("/api/value?" + new URLSearchParams(query));
    if (!response.ok) {
      showError("could not read the whole value (HTTP " + response.status + ")");
      return "";
    }
    return response.text();
  };
}

async function showHistory(key) {
  setText($("history-key"), "(", served(key), ")");
  const list = $("history");
  list.replaceChildren();
  let writes = [];
  if (session.kind === "replay") {
    const query = new URLSearchParams({ thread: session.threadId, key });
    const answer = await getJSON("/api/history?" + query);
    if (!answer.ok) return showError("could not read the key's history: " + answer.message);
    const body = answer.body;
    writes = body.writes.map((w) => ({ step: w.step, agent: w.agent, tool: null, op: w.op + " " + w.path, at: w.at, source: "agent" }));
  } else {
    for (const step of session.steps) {
      for (const w of step.writes || []) {
        if (w.key === key) writes.push({ step: step.index, agent: w.agent, tool: w.tool, op: w.op, at: w.at, source: w.source });
      }
    }
  }
  if (!writes.length) list.append(el("li", { text: "no write recorded" }));
  for (const w of writes.slice(0, 1000)) {
    const who = (w.agent || w.source) + (w.tool ? " via tool " + w.tool : "");
    const when = w.at ? new Date(w.at * 1000).toISOString().slice(11, 23) : "";
    const item = el("li", { class: "write" });
    setText(item, "step #" + w.step + " · ", served(who), " · ", served(w.op), " · " + when);
    list.append(item);
  }
}

// -- a live run over AG-UI -----------------------------------------------------------------

function assistantMessage(id) {
  const last = session.messages[session.messages.length - 1]; // the one streaming, usually
  if (last && last.id === id && last.role === "assistant") return last;
  let message = session.messages.find((m) => m.id === id && m.role === "assistant");
  if (!message) {
    message = { id, role: "assistant", content: "" };
    session.messages.push(message);
  }
  return message;
}

function requestMessages() {
  return session.messages.map((m) => {
    if (m.role !== "assistant") return m;
    const out = { id: m.id, role: "assistant" };
    if (m.content) out.content = m.content;
    if (m.toolCalls && m.toolCalls.length) out.toolCalls = m.toolCalls;
    if (m.name) out.name = m.name;
    return out;
  });
}

const handlers = {
  RUN_STARTED() {
    session.runs += 1;
    recalled.clear(); // marks are this run's
    setStatus("running", "running");
  },
  STATE_SNAPSHOT(event) {
    session.state = clone(event.snapshot) || {};
    session.segment = { baseline: clone(event.snapshot) || {}, first: session.steps.length };
    session.segments.push(session.segment);
    session.pendingOps = [];
  },
  // A returning client (a stored thread continued): the server's whole conversation. It
  // replaces the page's, keeping a message of this run the server did not list yet.
  MESSAGES_SNAPSHOT(event) {
    const snapshot = (event.messages || []).map((m) => ({ ...m }));
    const known = new Set(snapshot.map((m) => m.id));
    const unsent = session.messages.filter((m) => m.role === "user" && !known.has(m.id)).slice(-1);
    session.messages = snapshot.concat(unsent);
  },
  STATE_DELTA(event) {
    const ops = event.delta.map((op) => clone(op));
    for (const op of ops) {
      try {
        session.state = applyOp(session.state, op);
      } catch (error) {
        showError("a state operation did not apply: " + error.message);
      }
    }
    if (session.current) session.current.ops.push(...ops);
    else session.pendingOps.push(...ops);
    // A step computed while it was running is missing these: compute it again when asked.
    const cursor = session.cursor;
    if (cursor && session.current && session.current.index <= cursor.index) session.cursor = null;
  },
  STEP_STARTED(event) {
    if (!session.segment) {
      session.segment = { baseline: {}, first: session.steps.length };
      session.segments.push(session.segment);
    }
    const step = {
      index: session.steps.length,
      agent: event.stepName,
      status: "running",
      answer: "",
      toolCalls: [],
      ops: [],
      preOps: session.pendingOps,
      segment: session.segment,
      run: session.runs,
      writes: [],
      started: performance.now(),
    };
    session.pendingOps = [];
    session.steps.push(step);
    session.current = step;
    highlight(step.agent);
    followTail();
  },
  TEXT_MESSAGE_START(event) {
    const message = assistantMessage(event.messageId);
    if (event.name) message.name = event.name;
  },
  TEXT_MESSAGE_CONTENT(event) {
    assistantMessage(event.messageId).content += event.delta;
    if (session.current) session.current.answer += event.delta; // drawn with the next frame
  },
  TOOL_CALL_START(event) {
    const call = { id: event.toolCallId, name: event.toolCallName, args: "", result: null };
    session.toolCalls.set(call.id, call);
    if (session.current) session.current.toolCalls.push(call);
    const message = assistantMessage(event.parentMessageId || event.toolCallId);
    message.toolCalls = message.toolCalls || [];
    message.toolCalls.push({ id: call.id, type: "function", function: { name: call.name, arguments: "" } });
    call.wire = message.toolCalls[message.toolCalls.length - 1];
  },
  TOOL_CALL_ARGS(event) {
    const call = session.toolCalls.get(event.toolCallId);
    if (!call) return;
    call.args += event.delta;
    call.wire.function.arguments += event.delta;
  },
  TOOL_CALL_RESULT(event) {
    const call = session.toolCalls.get(event.toolCallId);
    if (call) {
      call.result = event.content;
      if (session.current && !session.current.toolCalls.includes(call)) session.current.toolCalls.push(call);
    }
    session.messages.push({ id: event.messageId, role: "tool", toolCallId: event.toolCallId, content: event.content });
  },
  CUSTOM(event) {
    if (event.name === MEMORY_EVENT && event.value) {
      // what this run recalled: marked in the user's memories (agents.capabilities.memory)
      for (const key of event.value.keys || []) recalled.add(key);
      loadMemories();
      return;
    }
    if (event.name !== STEP_EVENT || !session.current) return;
    const details = event.value;
    const step = session.current;
    step.prompt = details.prompt;
    step.input = details.input;
    step.usage = details.usage;
    step.durationMs = details.duration_ms;
    step.writes = details.writes || [];
    for (const recorded of details.tool_calls || []) {
      const call = session.toolCalls.get(recorded.id);
      if (call) {
        call.durationMs = recorded.duration_ms;
        call.isError = recorded.is_error;
      }
    }
  },
  STEP_FINISHED() {
    const step = session.current;
    if (!step) return;
    // The dev server sends each completed call's details before STEP_FINISHED: a step
    // closed without them was cut short (the run failed or was cancelled during it).
    if (step.status === "running") step.status = step.usage ? "done" : "error";
    if (step.durationMs === undefined) step.durationMs = performance.now() - step.started;
    session.current = null;
    if (selected === step.index) openStep(step.index);
  },
  RUN_FINISHED(event) {
    session.running = false;
    loadMemories(); // what the run saved
    highlight(null);
    const result = event.result || {};
    renderOutcome($("outcome"), {
      stopReason: event.outcome && event.outcome.type === "interrupt" ? "interrupted: waiting for confirmation" : result.stopReason,
      summary: result.summary,
    });
    const outcome = event.outcome;
    if (outcome && outcome.type === "interrupt") {
      session.interrupts = outcome.interrupts || [];
      session.decisions = new Map();
      renderInterrupts();
      setStatus("waiting for confirmation", "waiting");
    } else {
      setStatus(outcome && outcome.type === "cancelled" ? "cancelled" : "finished", "");
    }
    const output = event.result && event.result.output;
    if (output) showOutput(output);
  },
  RUN_ERROR(event) {
    session.running = false;
    highlight(null);
    if (session.current) session.current.status = "error";
    for (const step of session.steps) if (step.status === "running") step.status = "error";
    session.current = null;
    showError("run failed: " + event.message);
    setStatus("failed", "failed");
  },
};

// "Output: " and the run's output, isolated (`<bdi>`) and cut when long.
function showOutput(output) {
  const text = String(output);
  const view = boundedText("bdi", {}, OUTPUT_LIMIT, "output.txt", () => text);
  view.update(text);
  $("output").replaceChildren("Output: ", view.element);
}

function onEvent(event) {
  const handler = handlers[event.type];
  if (handler) handler(event);
  scheduleRender();
}

// A header value is bytes, one character each: fetch refuses a character above U+00FF
// ("could not reach the dev server" for a user named 山田). The user's name goes as its
// UTF-8 bytes, which the server decodes (acting_user.py).
function headerBytes(text) {
  return Array.from(new TextEncoder().encode(text), (byte) => String.fromCharCode(byte)).join("");
}

async function startRun(extra) {
  session.running = true;
  $("errors").replaceChildren();
  $("output").textContent = "";
  $("outcome").replaceChildren();
  setStatus("starting", "running");
  const body = {
    threadId: session.threadId,
    runId: randomId("run"),
    messages: requestMessages(),
    tools: [],
    context: [],
    forwardedProps: {},
    ...extra,
  };
  let response;
  try {
    const headers = { "content-type": "application/json", accept: "text/event-stream" };
    if (session.userId) headers["x-agent-network-user"] = headerBytes(session.userId); // acting_user.py
    response = await fetch("/agui/", {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
  } catch (error) {
    session.running = false;
    setStatus("failed", "failed");
    return showError("could not reach the dev server");
  }
  if (!response.ok) {
    session.running = false;
    let message = "HTTP " + response.status;
    try {
      const refused = await response.json();
      message += ": " + refused.error.message;
    } catch (error) {
      /* no JSON body: the status says it */
    }
    if (extra.resume && session.answering) {
      // refused answers (an edit the tool's schema refuses): the interrupts still wait
      session.interrupts = session.answering;
      session.decisions = new Map();
      renderInterrupts();
      setStatus("waiting for confirmation", "waiting");
      return showError("answer refused: " + message);
    }
    // nothing ran: the message goes back to the chat box, to be sent again once fixed
    if (!extra.resume && session.messages.length && session.messages[session.messages.length - 1].role === "user") {
      $("chat-input").value = session.messages.pop().content;
    }
    setStatus("refused", "failed");
    return showError("run refused: " + message);
  }
  try {
    await readEvents(response, onEvent, () => showError("the server sent an event that is not JSON"));
  } catch (error) {
    showError("the event stream broke off");
  }
  if (session.running) {
    session.running = false;
    showError("the run's stream ended without RUN_FINISHED");
    setStatus("failed", "failed");
  }
  scheduleRender();
}

// A decision: true (accept), false (reject), or { editedArgs } (accept with these arguments:
// AG-UI 1.0's approve_with_edits; the server checks them against the tool's schema).
function renderInterrupts() {
  const box = $("interrupts");
  box.replaceChildren();
  for (const interrupt of session.interrupts) {
    const decide = (decision) => {
      session.decisions.set(interrupt.id, decision);
      const verb = decision === true ? "accepted: " : decision === false ? "rejected: " : "accepted with edits: ";
      item.replaceChildren(el("div", {}, verb, iso(interrupt.message || "")));
      if (session.decisions.size === session.interrupts.length) resume();
    };
    const metadata = interrupt.metadata || {};
    const editor = el("textarea", { class: "edit-arguments", rows: 4, spellcheck: false });
    editor.value = JSON.stringify(metadata.arguments === undefined ? {} : metadata.arguments, null, 2);
    const acceptEdited = () => {
      let edited;
      try {
        edited = JSON.parse(editor.value);
      } catch (error) {
        return showError("the edited arguments are not JSON: " + error.message);
      }
      if (!edited || typeof edited !== "object" || Array.isArray(edited)) {
        return showError("the edited arguments must be a JSON object");
      }
      decide({ editedArgs: edited });
    };
    const item = el(
      "div",
      { class: "interrupt", "data-interrupt": interrupt.id },
      el("div", {}, iso(interrupt.message || interrupt.reason || "confirmation needed")),
      interrupt.toolCallId ? el("div", { class: "summary-note" }, "tool call ", iso(interrupt.toolCallId)) : null,
      el("button", { type: "button", class: "accept", text: "Accept", onclick: () => decide(true) }),
      el("button", { type: "button", class: "reject", text: "Reject", onclick: () => decide(false) }),
      metadata.tool
        ? el(
            "details",
            { class: "edit-call" },
            el("summary", {}, "Edit the arguments of ", iso(metadata.tool)),
            editor,
            el("button", { type: "button", class: "accept-edited", text: "Accept with these arguments", onclick: acceptEdited }),
          )
        : null,
    );
    box.append(item);
  }
}

function resume() {
  const answers = session.interrupts.map((interrupt) => {
    const decision = session.decisions.get(interrupt.id);
    const payload = decision === true || decision === false ? { approved: decision } : { approved: true, editedArgs: decision.editedArgs };
    return { interruptId: interrupt.id, status: "resolved", payload };
  });
  session.answering = session.interrupts; // back on the page if the server refuses the answers
  session.interrupts = [];
  $("interrupts").replaceChildren();
  startRun({ resume: answers });
}

// The run options' initial state: undefined when empty, null (and an error shown) when it is
// not a JSON object. The server checks the keys (scopes, schema) and refuses the run naming
// the key at fault.
function initialState() {
  const text = $("initial-state").value.trim();
  if (!text) return undefined;
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    showError("the initial state is not JSON: " + error.message);
    return null;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    showError("the initial state must be a JSON object of keys");
    return null;
  }
  return value;
}

// The page's runs live on the store this thread is read from: the next run continues it (the
// server sends its state and conversation back) as the user it belongs to.
function continueStored() {
  const stored = session;
  session = liveSession();
  session.threadId = stored.threadId;
  session.userId = stored.userId || null;
  session.runs = 1; // not a new thread: the run options (user, initial state) do not apply
  session.messages = [];
  selected = null;
  setText($("source"), "continuing stored thread ", served(session.threadId));
  $("detail-title").textContent = "Select a step";
  $("detail-body").replaceChildren();
  $("outcome").replaceChildren();
  renderTimeline();
}

function resetLive() {
  session = liveSession();
  selected = null;
  setText($("source"), "live thread ", served(session.threadId));
  $("detail-title").textContent = "Select a step";
  $("detail-body").replaceChildren();
  $("interrupts").replaceChildren();
  $("output").textContent = "";
  $("outcome").replaceChildren();
  highlight(null);
  renderTimeline();
  renderConversation($("conversation"), session.messages);
}

// -- stored threads ------------------------------------------------------------------------

async function loadThreads() {
  const list = $("threads");
  const answer = await getJSON("/api/threads");
  if (!answer.ok) return showError("could not list threads: " + answer.message);
  const body = answer.body;
  list.replaceChildren();
  if (!body.threads.length) list.append(el("li", { class: "summary-note", text: "no stored thread" }));
  for (const thread of body.threads) {
    const when = new Date(thread.updated_at * 1000).toISOString().slice(0, 19).replace("T", " ");
    list.append(
      el(
        "li",
        {},
        el("button", {
          type: "button",
          class: "thread",
          "data-thread-id": thread.thread_id,
          onclick: () => openThread(thread.thread_id),
        }, iso(thread.thread_id), " · " + thread.result_count + " steps · " + when),
      ),
    );
  }
}

// The long-term memories of the page's user (the authorize hook's principal when there is
// one), those the current run recalled marked.
const MEMORY_EVENT = "MemoryRecalled";
const recalled = new Set();

async function loadMemories() {
  const list = $("memories");
  const user = session.userId || $("user-id").value.trim();
  const answer = await getJSON("/api/memories?" + new URLSearchParams({ user }));
  if (!answer.ok) return showError("could not list memories: " + answer.message);
  list.replaceChildren();
  const found = answer.body.memories;
  if (!found.length) list.append(el("li", { class: "summary-note", text: answer.body.user ? "no memory" : "no user: no memory" }));
  for (const memory of found) {
    const mark = recalled.has(memory.key);
    list.append(
      el("li", { class: mark ? "memory recalled" : "memory", "data-key": memory.key, title: memory.namespace.join(" / ") },
        mark ? el("strong", { text: "recalled · " }) : "", iso(memory.key), ": ", iso(memory.text)),
    );
  }
}

async function openThread(threadId) {
  setStatus("loading", "running");
  const answer = await getJSON("/api/thread?" + new URLSearchParams({ id: threadId }));
  if (!answer.ok) {
    setStatus("failed", "failed");
    return showError("could not open thread: " + answer.message);
  }
  const body = answer.body;
  const segment = { baseline: {}, first: 0 };
  session = {
    kind: "replay",
    threadId,
    segments: [segment],
    cursor: null,
    running: false,
    messages: body.messages,
    messagesOmitted: body.messages_omitted,
    userId: body.user_id,
    steps: body.steps.map((s) => ({
      index: s.index,
      agent: s.agent,
      status: "done",
      answer: s.answer,
      prompt: s.prompt,
      input: s.input,
      cut: s.cut,
      usage: s.usage,
      durationMs: s.duration_ms,
      toolCalls: s.tool_calls.map((c) => ({
        id: c.id,
        name: c.name,
        args: c.arguments,
        result: c.content,
        isError: c.is_error,
        durationMs: c.duration_ms,
        cut: c.cut,
      })),
      ops: s.state_delta,
      run: s.run,
      preOps: [],
      segment,
    })),
  };
  selected = null;
  setText($("source"), "stored thread ", served(threadId), body.truncated ? " (first steps only)" : "");
  $("detail-body").replaceChildren();
  $("detail-title").textContent = "Select a step";
  $("errors").replaceChildren();
  $("interrupts").replaceChildren();
  $("timeline").scrollTop = 0;
  setStatus("replay", "");
  const last = body.last_run;
  renderOutcome($("outcome"), last && {
    note: "last run (run " + last.run + "): " + last.calls + " agent calls; the store keeps no stop reason",
  });
  $("output").replaceChildren();
  if (last && last.output) showOutput(last.output);
  renderTimeline();
  renderConversation($("conversation"), session.messages, session.messagesOmitted);
  if (session.steps.length) openStep(0);
}

// -- wiring --------------------------------------------------------------------------------

function init() {
  setText($("source"), "live thread ", served(session.threadId));
  $("timeline").addEventListener("scroll", scheduleRender, { passive: true });
  $("timeline").addEventListener("click", (event) => {
    const row = event.target.closest(".row");
    if (row) openStep(Number(row.getAttribute("data-index")));
  });
  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("chat-input");
    const text = input.value.trim();
    if (!text || session.running) return;
    if (session.kind === "replay" && serverInfo.runs_on_store) continueStored();
    else if (session.kind !== "live") resetLive();
    if (session.interrupts.length) return showError("answer the confirmation first");
    const extra = {};
    if (session.runs === 0) {
      // a thread runs as one user: the field is read when its first run starts
      session.userId = $("user-id").value.trim() || null;
      const initial = initialState();
      if (initial === null) return;
      if (initial !== undefined) extra.state = initial;
    }
    input.value = "";
    session.messages.push({ id: randomId("msg"), role: "user", content: text });
    startRun(extra);
  });
  $("new-thread").addEventListener("click", resetLive);
  $("threads-refresh").addEventListener("click", loadThreads);
  $("memories-refresh").addEventListener("click", loadMemories);
  $("user-id").addEventListener("change", () => { recalled.clear(); loadMemories(); });
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || selected === null) return;
    if (event.key === "ArrowDown" || event.key === "j") openStep(selected + 1);
    if (event.key === "ArrowUp" || event.key === "k") openStep(selected - 1);
  });
  renderTimeline();
  loadGraph();
  loadThreads();
  loadMemories();
  getJSON("/api/server").then((answer) => {
    if (!answer.ok) return;
    serverInfo = answer.body;
    if (serverInfo.authorized) {
      // the server's authorize hook names the user: the page cannot pick one
      for (const id of ["user-id", "user-id-label"]) document.getElementById(id).hidden = true;
    }
  });
}

init();
