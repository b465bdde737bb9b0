"""A hand-written MCP server (JSON-RPC lines over stdio, no SDK) whose `tools/list` is paged,
as a stranger's server may page it: `python paging_server.py MODE`.

- `pages`: three pages, one tool each (`t0`, `t1`, `t2`), then no cursor;
- `loop`: every page a new tool and the same cursor `again` (a listing that never ends);
- `endless`: every page a new tool and a new cursor;
- `twice`: two pages that both list `t0`;
- `broken`: one page: `t0`, and `broken`, whose inputSchema is not JSON Schema.

Any tool call answers with the tool's name; any other request is "method not found".
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

MODE = sys.argv[1]
_pages = itertools.count()


def tool(number: int) -> dict[str, Any]:
    return {"name": f"t{number}", "inputSchema": {"type": "object", "properties": {}}}


def page() -> dict[str, Any]:
    number = next(_pages)
    if MODE == "pages":
        return {"tools": [tool(number)], **({"nextCursor": str(number + 1)} if number < 2 else {})}
    if MODE == "loop":
        return {"tools": [tool(number)], "nextCursor": "again"}
    if MODE == "broken":
        schema = {"type": "object", "properties": {"a": {"type": 7}}}
        return {"tools": [tool(0), {"name": "broken", "inputSchema": schema}]}
    if MODE == "endless":
        return {"tools": [tool(number)], "nextCursor": f"page-{number + 1}"}
    return {"tools": [tool(0)], **({"nextCursor": "1"} if number == 0 else {})}  # twice


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method = request.get("method")
    if method == "initialize":
        info = {"name": "pager", "version": "1"}
        version = request["params"]["protocolVersion"]
        return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
    if method == "tools/list":
        if not (request.get("params") or {}).get("cursor"):
            globals()["_pages"] = itertools.count()  # a new listing starts at the first page
        return page()
    if method == "tools/call":
        return {"content": [{"type": "text", "text": request["params"]["name"]}]}
    raise LookupError(method)


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue  # a notification
    try:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
    except LookupError:
        error = {"code": -32601, "message": "Method not found"}
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": error}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
