"""`hostile_server.py`'s answers over Streamable HTTP on 127.0.0.1: `python hostile_http.py MODE
ANSWERS`, its port printed on a line. With ANSWERS `http` each answer is a JSON body, with `sse`
one SSE event.

In MODE `unreadable-get` it gives the session an id, so that the client opens the GET stream
for the server's own messages: a call of `slow` first sends a line that is not JSON on that
stream, then answers, a second later.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hostile_server import MODE, reply_line  # type: ignore[import-not-found]

SESSION = "hostile-session"
junk_due = threading.Event()  # a call of `slow` is under way: the GET stream sends its junk


class Handler(BaseHTTPRequestHandler):
    """Streamable HTTP: each POST's answer is its body; a GET stream in `unreadable-get`."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = reply_line(request) if "id" in request else None
        if request.get("method") == "tools/call" and request["params"]["name"] == "slow":
            junk_due.set()
            time.sleep(1)
        if reply is None:
            self._empty(202)
            return
        sse = sys.argv[2] == "sse"
        body = (f"event: message\ndata: {reply}\n\n" if sse else reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if sse else "application/json")
        self.send_header("Content-Length", str(len(body)))
        if MODE == "unreadable-get":
            self.send_header("Mcp-Session-Id", SESSION)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if MODE != "unreadable-get":
            self._empty(405)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.flush()
        junk_due.wait()
        self.wfile.write(b"event: message\ndata: this is not JSON\n\n")
        self.wfile.flush()
        time.sleep(600)  # the stream stays open: the client does not open another

    def do_DELETE(self) -> None:
        self._empty(405)

    def _empty(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
sys.stdout.write(f"{http.server_address[1]}\n")
sys.stdout.flush()
http.serve_forever()
