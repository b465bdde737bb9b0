// Reading the dev server's answers: a JSON one (`fetchJSON`), and an AG-UI answer, a
// text/event-stream whose frames are `data: <json>` lines ended by a blank line, read from
// fetch's ReadableStream as the bytes arrive (`readEvents`).

// Fetches `url` (with fetch's `init`) and reads its JSON answer: `{ ok, body, message }`, never
// throwing. A failure (no connection, a body that is not JSON, an error status) gives `ok:
// false` and a message to show, so the page says what went wrong instead of waiting forever;
// with `withKey`, the message ends with the key at fault when the error names one.
export async function fetchJSON(url, init, withKey = false) {
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    return { ok: false, body: null, message: "could not reach the dev server" };
  }
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    return { ok: false, body: null, message: "HTTP " + response.status + " (the answer was not JSON)" };
  }
  if (response.ok) return { ok: true, body, message: "" };
  const error = body && body.error;
  const message = error && error.message ? error.message : "HTTP " + response.status;
  const key = withKey && error && error.key ? " [" + error.key + "]" : "";
  return { ok: false, body, message: message + key };
}

function parseFrame(frame) {
  const data = frame
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""))
    .join("\n");
  return data ? JSON.parse(data) : null;
}

// Calls `onEvent(event)` for each event of `response` in order; returns when the stream ends.
// A frame that is not JSON is reported to `onBadFrame` and skipped.
export async function readEvents(response, onEvent, onBadFrame) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event;
      try {
        event = parseFrame(frame);
      } catch (error) {
        onBadFrame(frame);
        continue;
      }
      if (event) onEvent(event);
    }
  }
}
