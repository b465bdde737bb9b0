"""`MCPServer`: a Model Context Protocol server whose tools an agent can call.

    filesystem = MCPServer.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])
    search = MCPServer.http("https://example.com/mcp", headers={"Authorization": "Bearer ..."})
    coder = Agent("coder", tools=[write_notes, filesystem, search], model=...)

An `MCPServer` is a description plus, optionally, a connection held open. Lifetimes:

- By default a run starts the server the first time one of its agents needs the server's tools
  (the agent's first model call) and stops it when the run ends, after success, failure or
  cancellation (the run's resources close it; the SDK kills the stdio process tree). Two runs
  at once each have their own connection (their own process).
- Inside `async with server:` one connection is held for the whole block: every run in it
  shares that session (and process), and it stops when the block ends.

Tools are listed once per connection and cached: once per run by default, once for the whole
`async with` block when the server is held open. `await server.refresh()` re-lists a held
server's tools (for a run-scoped connection, the next run lists afresh anyway);
`cache_tools=False` lists them again at every agent call, for servers whose tools change.

Which tools are offered: every listed tool, or only those named in `allowed_tools`, and of
those only the ones `tool_filter(tool)` accepts (it gets the `ListedTool`). Names: a tool keeps
the server's name for it unless another tool of the same agent (a local tool, or a tool of
another server) has that name; then it is offered as `<server name>__<tool name>` (the other
server's tool too; local tools keep their names). A clash left after prefixing is an error.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any

from agents.capabilities.mcp._connection import Connection
from agents.capabilities.mcp._orphans import MARKER
from agents.capabilities.mcp._trace import mirror_headers
from agents.capabilities.mcp.errors import MCPServerError
from agents.capabilities.mcp.tool import ListedTool
from agents.models._client_options import check_headers
from agents.tools.tool import output_entry
from network.errors import ConfigurationError
from network.mappings import mapping_entries
from network.numbers import check_number
from network.urls import is_http_url

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_MAX_RESULT_BYTES = 1_000_000
"""The most text (UTF-8 bytes) a tool result may give the model, unless `max_result_bytes`
says otherwise: about 250,000 tokens, past any model's use for one tool result."""


class MCPServer:
    """An MCP server, given to an agent like a tool: `Agent(tools=[..., server])`.

    Build one with `MCPServer.stdio(...)` or `MCPServer.http(...)`; both take these options:

    Args:
        name: the server's name in prefixes, logs and errors (default: the name the server
            gives itself when it connects).
        allowed_tools: the names of the only tools to offer (the server's own names).
        tool_filter: `tool_filter(listed_tool) -> bool`: offer only the tools it accepts.
        cache_tools: keep the listing for the connection's lifetime (default); `False` lists
            again at every agent call.
        timeout: seconds each tool call may take (default: the agent's, else the network's
            `tool_timeout`, else 60: `DEFAULT_CALL_TIMEOUT`); past it the model gets an error
            result.
        connect_timeout: seconds the whole connection may take (starting the server, the
            SDK's discovery probe, the handshake: one deadline), and each listing.
        outputs_to_state: `{tool_name: {state_key: {"source": field, "handler": fn}}}`: as
            `@tool(outputs_to_state=...)`, per tool (the server's names).
        max_result_bytes: the most text a tool result may give the model, in UTF-8 bytes
            (what was sent, its `structuredContent` as JSON, else its blocks' text, data and
            URIs; then the value's text, JSON escapes and all; default 1,000,000); a larger
            result is an error result naming the server, the tool and the size, none of its
            content. None: no limit.
    """

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        allowed_tools: Sequence[str] | None = None,
        tool_filter: Callable[[ListedTool], bool] | None = None,
        cache_tools: bool = True,
        timeout: float | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        outputs_to_state: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
        max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
    ) -> None:
        if (command is None) == (url is None):
            raise ConfigurationError(
                "MCPServer needs either a command (MCPServer.stdio) or a url (MCPServer.http)"
            )
        label = name or command or _shown(url) or _unnamed(command, url)
        _check_target(label, command, url, args)
        if name is not None and (not isinstance(name, str) or not name):
            raise ConfigurationError(f"MCP server name must be a non-empty string, got {name!r}")
        allowed = _checked_allowed(label, allowed_tools)
        if not isinstance(cache_tools, bool):
            raise ConfigurationError(
                f"MCP server {label!r}: cache_tools must be True or False, got {cache_tools!r}"
            )
        if tool_filter is not None and not callable(tool_filter):
            raise ConfigurationError(f"MCP server {label!r}: tool_filter must be callable")
        check_number(f"MCP server {label!r}: timeout (seconds)", timeout, above=True, optional=True)
        # no None: every connection and listing has a deadline
        check_number(
            f"MCP server {label!r}: connect_timeout (seconds)", connect_timeout, above=True
        )
        check_number(
            f"MCP server {label!r}: max_result_bytes",
            max_result_bytes,
            integer=True,
            above=True,
            optional=True,
        )
        _check_env(label, env)
        # checked as every HTTP client's are: a value the client cannot send failed the
        # connection with h11's error, which quoted the value (a token) in the run's error
        checked_headers = check_headers(f"MCP server {label!r}", headers)
        if cwd is not None and not isinstance(cwd, str | os.PathLike):
            raise ConfigurationError(f"MCP server {label!r}: cwd must be a path, got {cwd!r}")
        _check_outputs(label, outputs_to_state)
        self.command = command
        self.args = _checked_args(label, args)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.url = url
        self.headers = checked_headers
        self.name = name
        self.allowed_tools = allowed
        self.tool_filter = tool_filter
        self.cache_tools = cache_tools
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_result_bytes = max_result_bytes
        self.outputs_to_state = {
            tool: {key: dict(mapping) for key, mapping in mappings.items()}
            for tool, mappings in (outputs_to_state or {}).items()
        }
        self._held: Connection | None = None

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> MCPServer:
        """A server the library starts as a subprocess and talks to over its stdin/stdout.

        `env` is added to a small safe default environment (PATH, HOME, ...; the SDK's), not
        to this process's whole environment: pass what the server needs.
        """
        return cls(command=command, args=args, env=env, cwd=cwd, **options)

    @classmethod
    def http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> MCPServer:
        """A server reached over Streamable HTTP at `url`; `headers` go with every request."""
        return cls(url=url, headers=headers, **options)

    # -- lifetime ------------------------------------------------------------------------

    async def __aenter__(self) -> MCPServer:
        """Hold one connection open for the block; every run inside it shares it."""
        if self._held is not None:
            raise ConfigurationError(f"MCP server {self.label!r} is already held open")
        connection = Connection(self)
        await connection.__aenter__()
        self._held = connection
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        held, self._held = self._held, None
        if held is not None:
            await held.__aexit__(exc_type, exc, traceback)

    async def refresh(self) -> None:
        """List the held connection's tools again now (outside `async with`: nothing to do,
        each run lists afresh)."""
        if self._held is not None:
            await self._held.tools(refresh=True)

    async def connection(self, run: Any) -> Connection:
        """The connection for `run` (a `RunContext`): the held one, else the run's own,
        opened now if the run has none yet and closed when the run ends."""
        if self._held is not None:
            return self._held
        if run is None:
            raise MCPServerError(
                f"MCP server {self.label!r} used outside a run and not held open "
                "(use `async with server:`)",
                server=self.label,
            )
        resources = run.engine.resources
        connection: Connection = await resources.open_owned(self, lambda: Connection(self))
        return connection

    async def list_tools(self, run: Any = None) -> list[ListedTool]:
        """The tools this server offers (after `allowed_tools` and `tool_filter`)."""
        connection = await self.connection(run)
        listed = await connection.tools(refresh=not self.cache_tools)
        return [tool for tool in listed if self._offers(tool)]

    def _offers(self, tool: ListedTool) -> bool:
        if self.allowed_tools is not None and tool.name not in self.allowed_tools:
            return False
        return self.tool_filter is None or bool(self.tool_filter(tool))

    # -- the transport the SDK client connects through -----------------------------------

    async def transport(self, stack: AsyncExitStack, marker: str | None = None) -> Any:
        """What `mcp.Client` connects to: stdio parameters, or an HTTP transport whose
        httpx client (carrying `headers`) is closed by `stack`. A stdio server's environment
        carries `marker` (`agents.capabilities.mcp._orphans`: how a teardown cut short finds it)."""
        if self.command is not None:
            from mcp import StdioServerParameters  # noqa: PLC0415 (mcp)

            env = dict(self.env or {})
            if marker is not None:
                env[MARKER] = marker
            return StdioServerParameters(
                command=self.command,
                args=self.args,
                env=env or None,
                cwd=None if self.cwd is None else os.fspath(self.cwd),
            )
        import httpx2  # noqa: PLC0415 (the SDK's HTTP client, a dependency of mcp)
        from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 (mcp)

        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=self.headers,
                timeout=httpx2.Timeout(30.0, read=300.0),
                event_hooks={"request": [mirror_headers]},  # a call's trace context
            )
        )
        assert self.url is not None
        return streamable_http_client(self.url, http_client=http)

    @property
    def label(self) -> str:
        """The name given, else the command or URL (for errors before it connected)."""
        return self.name or self.command or _shown(self.url) or "mcp"

    def __repr__(self) -> str:
        shown = _shown(self.url)
        where = f"command={self.command!r}" if self.command is not None else f"url={shown!r}"
        return f"MCPServer({self.label!r}, {where})"


def _shown(url: Any) -> str | None:
    """`url` as errors, logs and the model may read it: its password as `***` (the one
    redaction rule, `network.threads.urls.shown_url`); None when it is not a string."""
    if not isinstance(url, str) or not url:
        return None
    from network.threads.urls import shown_url  # noqa: PLC0415 (not loaded by `import agents`)

    return shown_url(url)


def _unnamed(command: Any, url: Any) -> str:
    """What an error calls a server that has neither a name nor a usable command or URL."""
    return f"MCPServer.stdio({command!r})" if command is not None else f"MCPServer.http({url!r})"


def _check_target(label: str, command: Any, url: Any, args: Any) -> None:
    """How the server is reached: a command (with its list of args) or an http(s) URL."""
    if command is not None and (not isinstance(command, str) or not command or "\0" in command):
        raise ConfigurationError(
            f"MCP server {label!r}: command must be a non-empty string without NUL bytes, "
            f"got {command!r}"
        )
    # the one rule for a URL a client sends to: a host, a valid port, no space or control
    # character (each failed every run at its connection instead: InvalidURL, OverflowError)
    if url is not None and not is_http_url(url):
        raise ConfigurationError(
            f"MCP server {label!r}: url must be an http(s) URL with a host, a valid port and "
            f"no space or control character, got {_shown(url) or url!r}"
        )
    if isinstance(args, str | bytes) or not isinstance(args, Iterable):
        raise ConfigurationError(f"MCP server {label!r}: args must be a list of strings")


def _checked_args(label: str, args: Iterable[Any]) -> list[str]:
    """`args` as the strings the process is given: each a string, a path or an int (a port,
    written as its digits); a NUL byte, which no process can be given, and anything else (a
    None would reach the server as the word 'None') refused."""
    checked: list[str] = []
    for index, arg in enumerate(args):
        if isinstance(arg, os.PathLike):
            arg = os.fspath(arg)
        if isinstance(arg, int) and not isinstance(arg, bool):
            arg = str(arg)
        if not isinstance(arg, str) or "\0" in arg:
            raise ConfigurationError(
                f"MCP server {label!r}: args[{index}] must be a string without NUL bytes, "
                f"got {arg!r}"
            )
        checked.append(arg)
    return checked


def _checked_allowed(label: str, allowed: Any) -> set[str] | None:
    """`allowed_tools`: None, or the tool names of an iterable of strings (not one string)."""
    if allowed is None:
        return None
    if isinstance(allowed, str | bytes) or not isinstance(allowed, Iterable):
        raise ConfigurationError(
            f"MCP server {label!r}: allowed_tools must be a list of tool names, got {allowed!r}"
        )
    names = list(allowed)  # once: a generator is read here, not consumed by a check
    for name in names:
        if not isinstance(name, str):
            raise ConfigurationError(
                f"MCP server {label!r}: allowed_tools holds {name!r}, not a tool name (a string)"
            )
    return set(names)


def _check_env(label: str, given: Any) -> None:
    """`env`: a mapping of non-empty strings to strings (an environment variable's name has no
    `=`, and neither has a NUL byte, which no process can be given). A value is not shown: it
    may be a key the server needs."""
    mapping_entries(
        given,
        lambda: f"MCP server {label!r}: env must map names to strings, got {type(given).__name__}",
        functools.partial(_checked_variable, f"MCP server {label!r}: env"),
    )


def _checked_variable(where: str, key: Any, value: Any) -> str:
    if not isinstance(key, str) or not key or "\0" in key or "=" in key:
        raise ConfigurationError(f"{where} has a bad name {key!r}")
    if not isinstance(value, str) or "\0" in value:
        got = "a string with a NUL byte" if isinstance(value, str) else type(value).__name__
        raise ConfigurationError(f"{where}[{key!r}] must be a string without NUL bytes, got {got}")
    return value


def _check_outputs(label: Any, outputs: Any) -> None:
    """`outputs_to_state` is `{tool: {state_key: {"source": ..., "handler": ...}}}`."""
    where = f"MCP server {label!r}: outputs_to_state"
    mapping_entries(
        outputs,
        lambda: f"{where} must map tool names to mappings",
        lambda tool_name, mappings: mapping_entries(
            mappings,
            lambda: (
                f"{where}[{tool_name!r}] must map state keys to {{'source': ..., 'handler': ...}}"
            ),
            functools.partial(output_entry, f"{where}[{tool_name!r}]"),
        ),
    )
