// Reading an AG-UI answer: a text/event-stream whose frames are `data: <json>` lines ended by a
// blank line, read from fetch's ReadableStream as the bytes arrive.

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
