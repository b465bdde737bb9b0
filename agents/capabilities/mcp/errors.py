"""`MCPServerError`: an MCP server could not be reached, started or listed."""

from __future__ import annotations

from network.errors import AgentNetworkError


class MCPServerError(AgentNetworkError):
    """An MCP server could not be started, connected to or asked for its tools.

    It fails the run (the agent cannot be offered the tools it was given). Failures of a call
    to a tool that was listed (an `isError` result, a server that died, a timeout) are not
    raised: the model reads them as error results and the run goes on.

    Attributes:
        server: the server's name.
    """

    def __init__(self, message: str, *, server: str) -> None:
        super().__init__(message)
        self.server = server
