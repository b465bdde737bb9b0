"""`Connection`: one open session with an MCP server, through the SDK's `mcp.Client`.

A connection is an async context manager: entering starts the server (stdio) or opens the
HTTP session in a host task of its own (see `Connection._host`), exiting stops it. The SDK's
stdio transport closes the server's stdin, waits, then terminates and kills its process tree,
all inside a cancellation shield, so a run that fails or is cancelled leaves no process
behind. The whole connection (starting the server, the SDK's discovery probe, the handshake)
is bounded by the server's `connect_timeout`, and so is each listing; a connection that
cannot be opened in time is an `MCPServerError`, raised at the deadline: the host task lives
in the event loop's MCP task group (`agents.capabilities.mcp._keeper`), where the SDK's teardown of
the
unanswered server finishes without holding the caller (a stdio server that ignores its stdin
closing costs 2 s of grace, then a terminate, and a kill 2 s later if need be). A teardown that
asyncio's own cancellation cuts short (`asyncio.run` cancels every task left when its main
coroutine returns) kills the server at once instead, and one that never ran is finished at
interpreter exit (`agents.capabilities.mcp._orphans`).

The listing is cached on the connection (see `MCPServer` for when it is refreshed), and
bounded: each description, each schema, the number of tools and their bytes together
(`agents.capabilities.mcp._bounds`). A call
that fails in transport (the server died, the session was closed) is a `ToolError` the model
reads; the connection is not reopened: the server stays down for the rest of its lifetime.
A message the SDK cannot read ends the calls and listings waiting at once
(`agents.capabilities.mcp._unreadable`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from agents.capabilities.mcp._arguments import arguments_check
from agents.capabilities.mcp._bounds import (
    SHOWN_NAME,
    ListingBudget,
    bounded_description,
    schema_size,
)
from agents.capabilities.mcp._keeper import session_group
from agents.capabilities.mcp._orphans import forget, kill_marked, new_marker
from agents.capabilities.mcp._sdk import load_sdk
from agents.capabilities.mcp._sdk import loaded as sdk_loaded
from agents.capabilities.mcp._trace import calling
from agents.capabilities.mcp._unreadable import PendingRequests, UnreadableMessage
from agents.capabilities.mcp.content import utf8_size
from agents.capabilities.mcp.errors import MCPServerError
from agents.capabilities.mcp.tool import ListedTool
from network.errors import ConfigurationError, ToolError
from network.logger import LazyLogger
from network.version import library_version

if TYPE_CHECKING:
    from mcp.types import Tool as MCPTool

_log = LazyLogger("agents.mcp")  # structlog loads on first use, not on import

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]

NO_READ_LIMIT = 7 * 24 * 3600.0  # a tool call is limited by the dispatcher, not the SDK
MAX_LIST_PAGES = 100  # a server whose tool listing never ends cannot hang a run
MAX_SERVER_NAME = 100  # characters kept of the name a server gives itself


class Connection:
    """An open session with one MCP server (see the module docstring)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.name: str = server.name or server.label
        self._stop = anyio.Event()
        self._settled = anyio.Event()  # connected, or failed to
        self._closed = anyio.Event()  # the host task is over: the server is stopped
        self._scope = anyio.CancelScope()  # the host's: its connect deadline, and its stop
        self._client: Any = None
        self._connect_error: BaseException | None = None
        self.failure: BaseException | None = None  # why the session ended, if it broke
        self._listed: list[ListedTool] | None = None
        self._list_lock = anyio.Lock()
        # the requests waiting for their answers, which a message the SDK cannot read ends
        self._pending = PendingRequests(lambda: self.name, one_stream=server.command is not None)

    async def __aenter__(self) -> Connection:
        """Start the session's host task; return once the handshake is done.

        The host runs in the event loop's MCP task group (`agents.capabilities.mcp._keeper`), not
        under
        this task: past `connect_timeout` this returns the error at once, while the SDK's
        teardown (its shielded shutdown grace, then terminate and kill) finishes there. The
        deadline covers loading the SDK on first use too (`agents.capabilities.mcp._sdk`).
        """
        timeout = self.server.connect_timeout
        self._scope.deadline = anyio.current_time() + timeout
        try:
            with anyio.CancelScope(deadline=self._scope.deadline):
                await load_sdk()
                group = await session_group()
                group.start_soon(self._host, name=f"MCP server {self.name}")
                await self._settled.wait()
        except BaseException:  # cancelled while connecting: the host stops in the background
            self._abandon()
            raise
        if self._client is None:
            self._abandon()
            error = self._connect_error or self.failure or _timed_out(timeout)
            raise MCPServerError(
                f"MCP server {self.name!r} could not be started or connected to: "
                f"{_describe(error)}",
                server=self.name,
            ) from error
        return self

    def _abandon(self) -> None:
        """Give the connection up: the host tears it down in its own time."""
        self._stop.set()
        self._scope.cancel()

    async def _host(self) -> None:
        """Hold the SDK client open until `__aexit__`, in a task of its own.

        The SDK runs its transport in task groups of the task that enters it. Entered in the
        run's own task, a transport failure (an HTTP server gone) would cancel the run; here
        it ends this task only: the failure is kept in `failure`, and calls fail with it.
        Before the handshake is done, a failure is kept for `__aenter__` to raise. Nothing
        escapes this task: it shares its task group with every other session.
        """
        from mcp import Client  # noqa: PLC0415 (mcp: loaded by `__aenter__`)

        started = False
        ended = False  # the session's teardown ran to its end
        timeout = self.server.connect_timeout
        # A stdio server carries a marker, so that a teardown cut short still kills it.
        marker = new_marker() if self.server.command is not None else None
        # One deadline for the whole connection: starting the process (or opening the HTTP
        # session), the SDK's `server/discover` probe (which waits 10 s of its own before
        # falling back to the handshake) and the handshake. Lifted once connected. A scope
        # around the whole session, not around the connecting alone, since the SDK's task
        # groups opened while connecting must close inside any scope they were opened in.
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    target = await self.server.transport(stack, marker)
                    # Each listing is bounded by the client's read timeout too.
                    client = Client(
                        target,
                        client_info=_client_info(),
                        read_timeout_seconds=timeout,
                        message_handler=self._pending.on_message,
                    )
                    await stack.enter_async_context(client)
                    self._scope.deadline = math.inf
                    if self.server.name is None:  # the name the server gives itself
                        info = client.server_info
                        if info is not None and info.name:
                            # the server's word, in every error the model reads: bounded
                            self.name = info.name[:MAX_SERVER_NAME]
                    self._client = client
                    _log.debug("mcp_server_connected", server=self.name)
                    started = True
                    self._settled.set()
                    await self._stop.wait()
            ended = True
        except Exception as exc:
            ended = True  # raised through the SDK's teardown, which ran to its end
            if started:
                self.failure = exc
                _log.warning("mcp_server_failed", server=self.name, error=_describe(exc))
            else:
                self._connect_error = exc
        finally:
            self._client = None
            if marker is not None:
                if not ended:  # asyncio's own cancel cut the SDK's shielded teardown short
                    killed = kill_marked(marker)
                    _log.debug("mcp_server_killed", server=self.name, pids=killed)
                forget(marker)
            self._settled.set()
            self._closed.set()
        _log.debug("mcp_server_closed", server=self.name)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the session (the SDK stops a stdio server's process) and wait for its host
        task, shielded: a run that ends, even cancelled, leaves no server process behind."""
        self._stop.set()
        with anyio.CancelScope(shield=True):
            await self._closed.wait()

    @property
    def open(self) -> bool:
        """Whether the session is open."""
        return self._client is not None

    async def tools(self, *, refresh: bool = False) -> list[ListedTool]:
        """The server's tools (every page), cached after the first listing."""
        async with self._list_lock:  # two agents asking at once list once
            if self._listed is None or refresh:
                self._listed = await self._list()
            return self._listed

    async def _list(self) -> list[ListedTool]:
        """Every page of the listing. The server is not trusted: a listing past
        `MAX_LIST_PAGES` pages, a cursor given twice (a loop) or a tool listed twice is an
        `MCPServerError` naming the server, not a listing cut short or doubled."""
        client = self._require_client()
        listed: dict[str, ListedTool] = {}
        names: set[str] = set()  # every tool the server lists, offered or not
        budget = ListingBudget(self.name)
        cursor: str | None = None
        cursors: set[str] = set()
        try:
            with anyio.fail_after(self.server.connect_timeout):
                for _ in range(MAX_LIST_PAGES):
                    page = await self._pending.during(
                        functools.partial(client.list_tools, cursor=cursor, cache_mode="refresh")
                    )
                    for tool in page.tools:
                        self._add_listed(listed, tool, budget)
                        names.add(tool.name)
                    cursor = page.next_cursor
                    if not cursor:
                        self._warn_unlisted(names)
                        return list(listed.values())
                    if cursor in cursors:
                        raise self._bad_listing(f"it gave the cursor {cursor[:100]!r} twice")
                    cursors.add(cursor)
        except (ConfigurationError, MCPServerError):
            raise
        except Exception as exc:
            # past the deadline, anyio's TimeoutError says nothing: say which deadline
            if isinstance(exc, TimeoutError):
                why = f"no answer within connect_timeout={self.server.connect_timeout:g} s"
            elif isinstance(exc, UnreadableMessage):
                why = f"it sent {_unreadable(exc, 'the listing')}"
            else:
                why = _describe(exc)
            raise MCPServerError(
                f"MCP server {self.name!r}: listing its tools failed: {why}",
                server=self.name,
            ) from exc
        raise self._bad_listing(f"it did not end within {MAX_LIST_PAGES} pages")

    def _warn_unlisted(self, names: set[str]) -> None:
        """A warning naming each tool that `allowed_tools` or `outputs_to_state` names and the
        server does not list (a typo offered nothing, or wrote nothing, without a word)."""
        for option, wanted in (
            ("allowed_tools", self.server.allowed_tools or ()),
            ("outputs_to_state", self.server.outputs_to_state),
        ):
            missing = sorted(name for name in wanted if name not in names)
            if missing:
                _log.warning(
                    "mcp_tools_not_listed",
                    server=self.name,
                    option=option,
                    tools=[name[:SHOWN_NAME] for name in missing[:20]],
                    listed=len(names),
                )

    def _add_listed(
        self, listed: dict[str, ListedTool], tool: MCPTool, budget: ListingBudget
    ) -> None:
        if tool.name in listed:
            raise self._bad_listing(f"it lists the tool {tool.name[:100]!r} twice")
        allowed = self.server.allowed_tools
        if _callable(tool) and (allowed is None or tool.name in allowed):
            # a tool left out is never offered: its schema is not read (a bad one would fail
            # the listing, and with it the tools that were asked for), nor counted
            listed[tool.name] = self._listed_tool(tool, budget)

    def _bad_listing(self, why: str) -> MCPServerError:
        return MCPServerError(
            f"MCP server {self.name!r}: its tool listing is unusable: {why}", server=self.name
        )

    def _listed_tool(self, tool: MCPTool, budget: ListingBudget) -> ListedTool:
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        # bounded first: what the model would be sent, and what the schema check would read
        description = bounded_description(
            self.name, tool.name, tool.description or tool.title or ""
        )
        budget.add(description, schema_size(self.name, tool.name, schema))
        if isinstance(tool.output_schema, dict):  # not sent to the model, but checked at calls
            schema_size(self.name, tool.name, tool.output_schema, "outputSchema")
        try:
            check = arguments_check(tool.name, schema)
        except ConfigurationError as exc:
            raise MCPServerError(f"MCP server {self.name!r}: {exc}", server=self.name) from exc
        return ListedTool(
            name=tool.name,
            description=description,
            input_schema=dict(schema),
            check=check,
            annotations=tool.annotations,
        )

    async def call(
        self,
        remote_name: str,
        arguments: dict[str, Any],
        shown_as: str,
        progress: ProgressCallback | None = None,
    ) -> Any:
        """Call tool `remote_name`; a transport failure is a `ToolError` naming `shown_as`.

        With `progress`, the call carries a progress token and `progress(progress, total,
        message)` is called for each `notifications/progress` the server sends for it.
        """
        client = self._client
        if client is None:
            why = f" ({_describe(self.failure)})" if self.failure is not None else ""
            raise ToolError(
                f"tool {shown_as!r} failed: MCP server {self.name!r} failed: "
                f"its session is closed{why}",
                tool=shown_as,
            )
        try:
            # The call's time limit is the dispatcher's (`timeout`, `tool_timeout`): the
            # client's read timeout, which bounds the handshake and listing, is lifted here.
            with calling() as meta:  # the run's span: the server's trace continues it
                return await self._pending.during(
                    lambda: client.call_tool(
                        remote_name,
                        arguments,
                        read_timeout_seconds=NO_READ_LIMIT,
                        progress_callback=progress,
                        meta=meta,
                    )
                )
        except ToolError:
            raise
        except UnreadableMessage as exc:  # its words are the parser's, bounded
            raise ToolError(
                f"tool {shown_as!r} failed: MCP server {self.name!r} sent "
                f"{_unreadable(exc, 'the call')}",
                tool=shown_as,
            ) from exc
        except Exception as exc:  # MCPError, a closed stream, an HTTP error: the server's end
            raise ToolError(
                f"tool {shown_as!r} failed: MCP server {self.name!r} {self._failed(exc)}",
                tool=shown_as,
            ) from exc

    def _failed(self, exc: Exception) -> str:
        """How a failed call reads: the error, or its size when its text (a JSON-RPC error's
        message, which the server chose, or the SDK's words quoting what the server sent) is
        over `max_result_bytes`, as a result is."""
        limit = self.server.max_result_bytes
        size = utf8_size(str(exc))
        if limit is not None and size > limit:
            return (
                f"failed with an error of {size:,} bytes, over the limit of {limit:,} "
                "(max_result_bytes); none of it is shown"
            )
        return f"failed: {_describe(exc)}"

    def _require_client(self) -> Any:
        if self._client is None:
            raise MCPServerError(f"MCP server {self.name!r} is not connected", server=self.name)
        return self._client


def _timed_out(timeout: float) -> TimeoutError:
    if not sdk_loaded():  # the first connection of the process: the import is under way
        return TimeoutError(
            f"the mcp SDK did not finish loading within connect_timeout={timeout:g} s (it "
            "loads once per process: import mcp at startup to keep it out of the deadline)"
        )
    return TimeoutError(f"no answer within connect_timeout={timeout:g} s")


def _unreadable(exc: UnreadableMessage, request: str) -> str:
    return f"a message that cannot be read while {request} waited for its answer ({exc})"


def _client_info() -> Any:
    from mcp.types import Implementation  # noqa: PLC0415 (mcp)

    return Implementation(name="agent-network", version=library_version())


def _describe(exc: BaseException) -> str:
    """One line about `exc`, unwrapping exception groups to their first leaf."""
    # pydantic, loaded by the MCP SDK by now, not by importing this module (`import agents`)
    from pydantic import ValidationError  # noqa: PLC0415

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ValidationError):
        return _not_mcp(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _not_mcp(exc: Any) -> str:
    """An answer the SDK refused as not valid for the protocol version: where and why, without
    pydantic's input echoes and links (the model may read it)."""
    problems = exc.errors(include_url=False, include_input=False)
    listed = "; ".join(
        f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
        for problem in problems[:3]
    )
    more = f" and {len(problems) - 3} more" if len(problems) > 3 else ""
    return f"its answer is not a valid {exc.title}: {listed}{more}"


def _callable(tool: MCPTool) -> bool:
    """Whether a plain `tools/call` can run `tool`: one the server says must be called as a
    task (`execution.taskSupport: "required"`) refuses every plain call, so it is not offered."""
    execution = tool.execution
    return execution is None or execution.task_support != "required"
