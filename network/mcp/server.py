"""`mcp_server(network)`: an MCP server whose one tool runs `network`.

The tool (named after the network, see `run_tool_name`) takes `{"input": str, "state":
{...}}` (`state` optional: the run's initial state, validated by the network's schema;
unprefixed and `user:` keys only, as on a thread) and
returns the run's output as text content and `{"output", "stop_reason", "state"}` as
structured content (`state` is the final state's JSON form, without `temp:` keys). Each call
is a fresh run; calls may run concurrently. With `"thread": id` a call runs on that thread
instead, its conversation and state carrying over, and approvals waiting on it
(`network.mcp.threaded`): the structured content then adds `thread` and `interrupts`.

What every protocol server needs is the serving layer's (`network.serving`), shared with the
AG-UI server: principals (`authorize=`, given the HTTP request over Streamable HTTP and None
over stdio), thread ownership, one run per thread, id limits, exactly-once answers to
approvals, and error screening. A run that fails, or input the network refuses, is an
`isError` result: the calling agent reads it as a failed tool call. The library's own errors
(`AgentNetworkError`), written to be read, name the key, tool or agent at fault and are sent
as they are; any other exception (a router's, a store's, a hook's) may hold a connection
string or a token, so the client gets only `internal error (reference err_...)`, and the
server logs the whole exception, traceback included, under that reference for the operator.
A refused request (`RequestError`) is told by its code and message. The arguments come from
outside and are validated before anything runs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import to_json

from network.errors import ConfigurationError
from network.mcp.arguments import OUTPUT_SCHEMA, RunArguments
from network.mcp.progress import progress_sinks
from network.mcp.threaded import run_on_thread, waiting
from network.network import Network
from network.run.tool_names import check_tool_name
from network.serving.capacity import RunSlots
from network.serving.client_writes import check_scopes
from network.serving.default_store import default_memory_store
from network.serving.errors import RequestError
from network.serving.principals import Authorize
from network.serving.screening import screened
from network.serving.threads import ServedThreads
from network.telemetry.propagation import continued, incoming
from network.threads.leases import DEFAULT_LEASE_TTL
from network.utf8 import NO_UTF8_FORM, utf8_copy, utf8_text
from network.version import library_version

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult

LOGGER = "network.mcp"

__all__ = ["OUTPUT_SCHEMA", "RunArguments", "mcp_server", "run_tool_name"]


def run_tool_name(network: Network[Any]) -> str:
    """The tool's name: the network's name, with anything but letters, digits, `_` and `-`
    replaced by `_` (the characters MCP clients and model providers accept)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", network.name)[:64]
    return name or "run_network"


def mcp_server(
    network: Network[Any],
    *,
    tool_name: str | None = None,
    description: str | None = None,
    authorize: Authorize | None = None,
    store: Any = None,
    lease_ttl: float = DEFAULT_LEASE_TTL,
    max_runs: int | RunSlots | None = None,
) -> Server[Any]:
    """An MCP server (the SDK's `mcp.server.lowlevel.Server`) whose one tool runs `network`.

    Args:
        network: the network each tool call runs.
        tool_name: the tool's name (default: `run_tool_name(network)`): 1 to 64 letters,
            digits, `_` or `-`, the names model providers accept (else `ConfigurationError`).
        description: what the calling model reads about the tool (default: the network's
            name and its agents' descriptions).
        authorize: `authorize(request, thread_id)` returning the caller's principal, or
            raising `Unauthorized` / `Forbidden` (`network.serving.principals`): asked for
            every call (`thread_id` None for a call on no thread). `request` is the HTTP
            request over Streamable HTTP, None over stdio. Default: every call anonymous.
        store: where calls with `thread` keep their threads: a thread store, a database URL or
            an SQLite path (default: a `MemoryStore` of this server, lost with the process, at most
            10,000 threads and 256 MiB of their records: `network.serving.default_store`).
        lease_ttl: with `store`, seconds a run's lease on its thread lasts without renewal.
        max_runs: the most runs under way at once, with a thread or without; a call beyond
            is refused at once (`refused (server_busy): ...`). A count, or a `RunSlots`
            shared with another server of the process; default
            `network.serving.capacity.default_max_runs()` (at most 512).
    """
    # checked before anything is made: the name is what every client and its model calls
    name = (
        run_tool_name(network)
        if tool_name is None
        else check_tool_name("mcp_server tool_name", tool_name)
    )
    if description is not None and not isinstance(description, str):
        raise ConfigurationError(
            f"mcp_server description must be a string, got {type(description).__name__}"
        )
    from mcp.server.lowlevel import Server  # noqa: PLC0415 (mcp: only serving a network loads it)

    served = ServedThreads(
        network,
        authorize=authorize,
        store=store if store is not None else default_memory_store(),
        lease_ttl=lease_ttl,
        max_runs=max_runs,
    )
    tool = _RunTool(network, served, name, description)

    @contextlib.asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await served.close()  # a store opened here from a URL or path

    return Server(
        network.name,
        version=library_version(),
        on_list_tools=tool.list,
        on_call_tool=tool.call,
        lifespan=lifespan,
    )


class _RunTool:
    """The server's one tool: its listing, and each call as a run of the network."""

    def __init__(
        self,
        network: Network[Any],
        served: ServedThreads,
        name: str,
        description: str | None,
    ) -> None:
        import mcp.types as types  # noqa: PLC0415 (mcp)

        self.network = network
        self.served = served
        self.name = name
        self.tool = types.Tool(
            name=name,
            description=description or _description(network),
            input_schema=RunArguments.model_json_schema(),
            output_schema=OUTPUT_SCHEMA,
        )

    async def list(self, _ctx: Any, _params: Any) -> ListToolsResult:
        from mcp.types import ListToolsResult  # noqa: PLC0415 (mcp)

        return ListToolsResult(tools=[self.tool])

    async def call(self, mcp_request: Any, params: CallToolRequestParams) -> CallToolResult:
        """A `tools/call`: the arguments validated, the run, its result or an `isError` one."""
        if params.name != self.name:  # a protocol error, as the MCP spec says: not a result
            from mcp.shared.exceptions import MCPError  # noqa: PLC0415 (mcp)
            from mcp.types import INVALID_PARAMS  # noqa: PLC0415 (mcp)

            asked = params.name[:80]  # a stranger's name, echoed bounded
            raise MCPError(
                INVALID_PARAMS, f"unknown tool {asked!r} (this server has {self.name!r})"
            )
        try:
            arguments = RunArguments.model_validate(params.arguments or {})
        except ValidationError as exc:
            return _error(f"invalid arguments: {_problems(exc)}")
        if arguments.answers is not None and arguments.thread is None:
            # (the thread's check would read 'thread must be a string, got NoneType')
            return _error(
                'invalid arguments: answers: answers are given with the "thread" whose '
                "interrupts they answer"
            )
        request = getattr(mcp_request, "request", None)  # the HTTP request, None over stdio
        # the caller's span: its HTTP `traceparent`, else its message's `_meta` (SEP-414)
        parent = incoming(getattr(request, "headers", None)) or incoming(params.meta)
        thread: str | None = None
        try:
            if arguments.thread is None and arguments.answers is None:
                await self.served.principal(request, None)
                check_scopes(arguments.state or ())  # as on a thread: no app: or temp: keys
                with self.served.slot(), continued(parent):  # one of the server's `max_runs`
                    result = await self.network.run(
                        arguments.input, state=arguments.state, sinks=progress_sinks(mcp_request)
                    )
                if result.interrupts:  # nothing to answer it on: the fresh run is gone
                    return _error(_needs_thread(result))
            else:
                sinks = progress_sinks(mcp_request)
                result, thread = await run_on_thread(self.served, request, arguments, sinks, parent)
        except RequestError as refused:
            return _error(f"refused ({refused.code}): {refused.message}")
        except Exception as exc:  # the caller reads what it may; the server goes on
            name = self.network.name
            told, _ = screened(exc, logger=LOGGER, event="mcp_run_failed", network=name)
            return _error(f"run of network {name!r} failed: {told}")
        return _answer(result, thread)


def _needs_thread(result: Any) -> str:
    """Why a call on no thread that stopped on an approval is an error: it could never be
    answered (the run is not kept), and an empty output would read as an answer."""
    tools = ", ".join(sorted({repr(interrupt.tool) for interrupt in result.interrupts}))
    return (
        f"refused (approval_needs_thread): the run stopped for an approval of {tools}, and "
        'approvals are answered on a thread: call again with "thread": an id of your own, '
        "then answer its interrupts"
    )


def _problems(exc: ValidationError) -> str:
    """Each invalid argument, by its path, with pydantic's message."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )


def _answer(result: Any, thread: str | None) -> CallToolResult:
    """A run's result: its output as text, and output, stop reason and state (with the
    thread and its waiting interrupts, on a thread) as structured content."""
    from mcp.types import CallToolResult, TextContent  # noqa: PLC0415 (mcp)

    structured: dict[str, Any] = {
        "output": result.output,
        "stop_reason": str(result.stop_reason),
        "state": result.state.snapshot(),
    }
    if thread is not None:
        structured["thread"] = thread
        structured["interrupts"] = waiting(result)
    return CallToolResult(
        content=[TextContent(type="text", text=utf8_text(result.output or ""))],
        structured_content=_with_utf8_form(structured),
    )


def _with_utf8_form(structured: dict[str, Any]) -> dict[str, Any]:
    """`structured`, or a copy with each lone surrogate as U+FFFD (`network.utf8`) when it
    holds one (a custom model's answer may): the SDK writes the result as UTF-8 JSON, and a
    result it cannot write was never sent, leaving the client waiting for its answer."""
    try:
        to_json(structured, fallback=str)
    except ValueError as exc:  # pydantic_core's PydanticSerializationError
        if NO_UTF8_FORM not in str(exc):
            raise
        mended: dict[str, Any] = utf8_copy(structured)
        return mended
    return structured


def _description(network: Network[Any]) -> str:
    agents = "; ".join(
        # a description's own full stop is dropped: the sentence ends with one
        f"{agent.name}: {agent.description.rstrip('.')}" if agent.description else agent.name
        for agent in network.agents.values()
    )
    return (
        f"Runs the agent network {network.name!r} on `input` and returns its output and final "
        f"state. Agents: {agents}."
    )


def _error(message: str) -> CallToolResult:
    """An `isError` result: the caller's model reads `message` as the tool's failure."""
    from mcp.types import CallToolResult, TextContent  # noqa: PLC0415 (mcp)

    text = utf8_text(message)  # an error may quote a model's text (see `_with_utf8_form`)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
