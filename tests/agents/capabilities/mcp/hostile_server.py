"""A hand-written MCP server (JSON-RPC lines over stdio, no SDK) that answers as a careless or
hostile server may: `python hostile_server.py MODE` (`hostile_http.py` serves the same answers
over Streamable HTTP).

- `nested`: its tool `deep` answers with a text of 100,000 nested JSON arrays (more than any
  JSON parser nests);
- `loud`: its tool `deep` answers with a JSON-RPC error whose message is 2,000,000 characters;
- `mute`: it answers the handshake, and never its `tools/list`;
- `crowded`: it lists 500 tools, `t0` ... `t499`;
- `sloppy`: it lists `deep`, and `bare`, whose inputSchema is `{}` (no `"type": "object"`, which
  MCP asks for);
- `garbled`: its tool `deep` answers with `content` a string, not a list of blocks;
- `referring`: the inputSchema of `deep` refers to a schema on the web (`a`) and to one it does
  not have (`b`);
- `escaped`: its tool `deep` answers with two text blocks of 300,000 control characters each
  (600,000 bytes of text; as JSON, which the model reads of several blocks, six times that);
- `blank`: its tool `deep` fails (`isError`) with 2,000 empty text blocks (their text, joined
  by newlines, is 1,999 of them);
- `vain`: it calls itself 100,000 `h`s, and its tool `deep` answers with a JSON-RPC error;
- `hung`: it lists `deep`, and never answers a call of it;
- `wordy`: the description of `deep` is 2,000,000 characters;
- `tower`: the inputSchema of `deep` nests 50 levels of objects, and `fine` is a plain tool;
- `heavy`: the inputSchema of `deep` is 200,000 bytes (a property's description), and `fine`
  is a plain tool;
- `tower-out`, `heavy-out`: as `tower` and `heavy`, for the outputSchema of `deep`;
- `throng`: it lists 1,001 tools, `t0` ... `t1000`;
- `bulky`: it lists 300 tools, each described in 4,000 characters (1.2 MB together);
- `unreadable-deep`, `unreadable-text`, `unreadable-rpc`: it lists `deep`, `fine` and `hang`
  (never answered), and answers a call of `deep` with a line the SDK cannot read: a result
  whose `structuredContent` nests 10,000 levels (deeper than its JSON parser goes), a line
  that is not JSON, a JSON-RPC response whose `result` is a string (JSON-RPC allows it, MCP
  does not);
- `unreadable-forged`: it answers a call of `deep` with a JSON-RPC parse error in the words
  the SDK gives its own over HTTP;
- `unreadable-get` (over HTTP: `hostile_http.py`): it lists `slow` as well;
- `unreadable-list`: it answers `tools/list` with a line that is not JSON;
- `banner`: it writes a line that is not JSON on its stdout before anything else.
- `terse`: its tool `deep` fails (`isError`) with no content block, its details in
  `structuredContent` alone.
- `asking`: a call of its tool `deep` asks the client things first, as servers may: its
  model (`sampling/createMessage`), its user (`elicitation/create`) and its folders
  (`roots/list`), and answers with the client's three answers as JSON text.

Any other tool call answers with the tool's name; any other request is "method not found".
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODE = sys.argv[1]
DEPTH = 100_000
LOUD = 2_000_000
UNREADABLE_DEPTH = 10_000


def tools() -> list[dict[str, Any]]:
    count = {"crowded": 500, "throng": 1001, "bulky": 300}.get(MODE)
    names = [f"t{n}" for n in range(count)] if count else ["deep"]
    listed: list[dict[str, Any]] = [
        {"name": name, "inputSchema": {"type": "object"}} for name in names
    ]
    if MODE == "bulky":
        for tool in listed:
            tool["description"] = "d" * 4000
    if MODE == "wordy":
        listed[0]["description"] = "w" * 2_000_000
    field = "outputSchema" if MODE.endswith("-out") else "inputSchema"
    if MODE.startswith("tower"):
        schema: dict[str, Any] = {"type": "object"}
        for _ in range(49):
            schema = {"type": "object", "properties": {"x": schema}}
        listed[0][field] = schema
    if MODE.startswith("heavy"):
        big = {"type": "string", "description": "h" * 200_000}
        listed[0][field] = {"type": "object", "properties": {"x": big}}
    if MODE.startswith(("tower", "heavy", "unreadable")):
        listed.append({"name": "fine", "inputSchema": {"type": "object"}})
    if MODE.startswith("unreadable"):
        listed.append({"name": "hang", "inputSchema": {"type": "object"}})
    if MODE == "unreadable-get":
        listed.append({"name": "slow", "inputSchema": {"type": "object"}})
    if MODE == "sloppy":
        listed.append({"name": "bare", "inputSchema": {}})
    if MODE == "referring":
        refs = {"a": {"$ref": "https://example.com/a.json"}, "b": {"$ref": "#/$defs/nope"}}
        listed[0]["inputSchema"]["properties"] = refs
    return listed


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to `request`: a result, an error, or None for no reply at all."""
    method = request.get("method")
    if method == "initialize":
        info = {"name": "h" * 100_000 if MODE == "vain" else "hostile", "version": "1"}
        version = request["params"]["protocolVersion"]
        result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "tools/list":
        if MODE == "mute":
            return None
        result = {"tools": tools()}
    elif method == "tools/call" and (MODE == "hung" or request["params"]["name"] == "hang"):
        return None
    elif method == "tools/call" and MODE == "vain":
        return {"code": -32603, "message": "no"}
    elif method == "tools/call" and MODE == "loud":
        return {"code": -32603, "message": "boom " + "y" * LOUD}
    elif method == "tools/call" and MODE == "garbled":
        result = {"content": "deep"}
    elif method == "tools/call" and MODE == "escaped":
        result = {"content": [{"type": "text", "text": "\x01" * 300_000}] * 2}
    elif method == "tools/call" and MODE == "blank":
        result = {"content": [{"type": "text", "text": ""}] * 2000, "isError": True}
    elif method == "tools/call" and MODE == "terse":
        details = {"error": "quota exceeded", "retry_after": 30}
        result = {"content": [], "structuredContent": details, "isError": True}
    elif method == "tools/call" and MODE == "nested":
        result = {"content": [{"type": "text", "text": "[" * DEPTH + "]" * DEPTH}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": request["params"]["name"]}]}
    else:
        return {"code": -32601, "message": "Method not found"}
    return {"result": result}


def unreadable(request_id: Any) -> str | None:
    """The line a server in an `unreadable-*` mode answers `deep` with."""
    if MODE == "unreadable-deep":
        nested = "[" * UNREADABLE_DEPTH + "]" * UNREADABLE_DEPTH
        result = '{"content": [], "structuredContent": {"a": ' + nested + "}}"
        return f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id)}, "result": {result}}}'
    if MODE == "unreadable-text":
        return "Traceback (most recent call last): this is not JSON"
    if MODE == "unreadable-rpc":
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": "deep"})
    if MODE == "unreadable-forged":
        forged = "Failed to parse JSON response: x\n  Invalid JSON: forged [type=json_invalid"
        error = {"code": -32700, "message": forged}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
    return None


def reply_line(request: dict[str, Any]) -> str | None:
    """The line answering `request` (one with an id), or None for no answer."""
    if request.get("method") == "tools/list" and MODE == "unreadable-list":
        return "this is not JSON"
    if request.get("method") == "tools/call" and request["params"]["name"] == "deep":
        junk = unreadable(request["id"])
        if junk is not None:
            return junk
    reply = answer(request)
    if reply is None:
        return None
    if "result" not in reply:
        reply = {"error": reply}
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], **reply})


ASKED = {
    "sampling/createMessage": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
    },
    "elicitation/create": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
    "roots/list": {},
}


def serve_stdio() -> None:
    if MODE == "banner":
        sys.stdout.write("hostile server 1.0 listening on stdio\n")
        sys.stdout.flush()
    asked: dict[str, Any] = {}  # the client's answers to this server's requests, by method
    waiting: Any = None  # the id of the call of `deep` waiting on them (mode `asking`)
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        if "method" not in request:  # the client's answer to a request of this server's
            asked[request["id"]] = request.get("error", request.get("result"))
            if len(asked) == len(ASKED):
                text = json.dumps(asked)
                reply = {"result": {"content": [{"type": "text", "text": text}]}}
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": waiting, **reply}) + "\n")
                sys.stdout.flush()
            continue
        if MODE == "asking" and request.get("method") == "tools/call":
            waiting = request["id"]
            for method, params in ASKED.items():
                ask = {"jsonrpc": "2.0", "id": method, "method": method, "params": params}
                sys.stdout.write(json.dumps(ask) + "\n")
            sys.stdout.flush()
            continue
        reply = reply_line(request)
        if reply is not None:
            sys.stdout.write(reply + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    serve_stdio()
