"""The JSON body of a Chat Completions request, assembled from pieces serialized once.

Each message's JSON text is cached with the message (`wire.to_wire_json`) and a tool list's
JSON with the model (`ToolsText`), so a request body is one string join over the run's
messages plus a few small fields: building it costs the same at step 100 as at step 1.
"""

from __future__ import annotations

import json
from typing import Any

from agents.models._per_list import PerList
from agents.models._wire import to_wire_json
from agents.models.base import ModelRequest


class ToolsText(PerList[str]):
    """The JSON text of tool lists, made once per list (an agent's list lives as long as it)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(_json_text)


def _json_text(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, ensure_ascii=False)


def wire_tool_choice(choice: str) -> Any:
    """`"auto"`, `"required"`, `"none"` as they are; a tool's name as OpenAI's object form."""
    if choice in ("auto", "required", "none"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def request_body(
    model: str,
    request: ModelRequest,
    params: dict[str, Any],
    tools_text: ToolsText,
    *,
    stream: bool,
) -> bytes:
    """The request's JSON, as bytes: model, messages, tools, tool_choice, stream, params."""
    pieces = [to_wire_json(m) for m in request.system]
    pieces += [to_wire_json(m) for m in request.history]
    if "" in pieces:  # a message not sent (`wire.UNSENT`): rare, one scan in C
        pieces = [p for p in pieces if p]
    head = '{"model":' + json.dumps(model, ensure_ascii=False) + ',"messages":[' + ",".join(pieces)
    extra: dict[str, Any] = {}
    tail = ""
    if request.tools:
        tail = ',"tools":' + tools_text(request.tools)
        if request.tool_choice:
            extra["tool_choice"] = wire_tool_choice(request.tool_choice)
    if (
        request.response_format is not None
    ):  # typed output, native mode (agents.capabilities.output)
        extra["response_format"] = request.response_format
    if stream:
        extra["stream"] = True
        extra["stream_options"] = {"include_usage": True}
    if params:
        extra.update(params)
    if request.params:
        extra.update(request.params)
    for reserved in ("model", "messages", "tools"):
        extra.pop(reserved, None)  # a param must not produce a second key
    if stream:
        extra["stream"] = True  # the caller reads SSE: a `stream` param must not turn it off
    else:
        extra.pop("stream", None)
    if extra:
        tail += "," + json.dumps(extra, ensure_ascii=False)[1:-1]
    return (head + "]" + tail + "}").encode()
