// Time travel from a stored thread's step: fork here, rewind here, or edit the state and fork;
// and the whole thread replayed with today's network (POST /api/replay), its report shown.
//
// The server does the work (POST /api/fork, /api/rewind: the network's own fork and rewind);
// the page only sends the thread, the step and, for an edit, the keys whose value changed.
// Its answers (the fork's id, the rewind's report) are shown in #travel-report, which stays
// on the page while the thread it names is opened.

import { $, el, iso } from "./dom.js";
import { fetchJSON } from "./sse.js";

const MAX_EDITABLE = 200000; // characters of state JSON put in the editor (larger: start empty)

// POST a JSON body: `{ ok, body, message }`, never throwing; a refusal's message names the key
// at fault (see `fetchJSON`).
const postJSON = (url, body) =>
  fetchJSON(
    url,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
    true,
  );

// The keys of `edited` whose value differs from `state`'s (a fork's update sets keys; it
// cannot remove one).
function changedKeys(state, edited) {
  const changed = Object.entries(edited).filter(
    ([key, value]) => !Object.prototype.hasOwnProperty.call(state, key) || JSON.stringify(state[key]) !== JSON.stringify(value),
  );
  return Object.fromEntries(changed); // own properties, also for a key named __proto__
}

function report(...children) {
  $("travel-report").replaceChildren(el("div", { class: "travel" }, ...children));
}

function showRewind(body) {
  const calls = body.tool_calls_not_undone || [];
  const list = el("ul", { id: "not-undone" });
  for (const call of calls.slice(0, 500)) {
    list.append(el("li", {}, "step #" + call.checkpoint + " · ", iso(call.agent), " · ", iso(call.tool), " · ", iso(call.call_id)));
  }
  report(
    el("div", { class: "travel-head" }, "Rewound ", iso(body.thread_id), " to step #" + body.checkpoint + ": " + body.discarded_calls + " calls discarded, kept whole as ", iso(body.kept_as)),
    calls.length ? el("div", { class: "warning", text: "Tool calls not undone (" + calls.length + "): " + body.note }) : null,
    calls.length ? list : null,
  );
}

// The "Time travel" part of a stored step's detail. `ctx`: { threadId, step, state,
// openThread(id), refreshThreads(), showError(message) }.
export function timeTravelSection(ctx) {
  const fork = async (update) => {
    const answer = await postJSON("/api/fork", { thread: ctx.threadId, at: ctx.step, update });
    if (!answer.ok) return ctx.showError("fork refused: " + answer.message);
    const updated = answer.body.updated || [];
    report(
      el("div", { class: "travel-head" }, "Forked ", iso(ctx.threadId), " at step #" + ctx.step + " as ", iso(answer.body.thread_id)),
      updated.length ? el("div", { id: "fork-updated" }, "with the state edited: ", iso(updated.join(", "))) : null,
    );
    ctx.refreshThreads();
    await ctx.openThread(answer.body.thread_id);
  };
  const rewind = async () => {
    const answer = await postJSON("/api/rewind", { thread: ctx.threadId, to: ctx.step });
    if (!answer.ok) return ctx.showError("rewind refused: " + answer.message);
    showRewind(answer.body);
    ctx.refreshThreads();
    await ctx.openThread(ctx.threadId);
  };
  const replay = async () => {
    const answer = await postJSON("/api/replay", { thread: ctx.threadId });
    if (!answer.ok) return ctx.showError("replay refused: " + answer.message);
    const head = answer.body.diverged ? "diverged from its recording" : "matched its recording";
    report(
      el("div", { class: "travel-head" }, "Replayed ", iso(ctx.threadId), " with today's network: " + head),
      el("pre", { id: "replay-report", text: answer.body.text }),
    );
  };
  // The editor is filled when opened (a large state is not serialised for every step shown),
  // from a copy: the page's own state object moves on when another step is opened.
  const editor = el("textarea", { id: "state-edit", rows: 10, spellcheck: false });
  let base = null;
  const fill = () => {
    if (base !== null) return;
    const text = JSON.stringify(ctx.state, null, 2);
    base = JSON.parse(text);
    editor.value = text.length <= MAX_EDITABLE ? text : "{}";
  };
  const forkEdited = () => {
    fill();
    let edited;
    try {
      edited = JSON.parse(editor.value);
    } catch (error) {
      return ctx.showError("the edited state is not JSON: " + error.message);
    }
    if (!edited || typeof edited !== "object" || Array.isArray(edited)) {
      return ctx.showError("the edited state must be a JSON object of keys");
    }
    return fork(changedKeys(base, edited));
  };
  return el(
    "div",
    { class: "part", id: "time-travel" },
    el("h3", { text: "Time travel" }),
    el("button", { type: "button", id: "fork-here", text: "Fork from here", onclick: () => fork(undefined) }),
    el("button", { type: "button", id: "rewind-here", text: "Rewind to here", onclick: rewind }),
    el("button", { type: "button", id: "replay-thread", text: "Replay with today's network", onclick: replay }),
    el(
      "details",
      { id: "edit-state", ontoggle: fill },
      // filled on the click itself too: "toggle" only fires after the click has returned
      el("summary", { text: "Edit the state and fork", onclick: fill }),
      editor,
      el("button", { type: "button", id: "fork-edited", text: "Fork with this state", onclick: forkEdited }),
    ),
  );
}
