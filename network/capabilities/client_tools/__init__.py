"""Client tools: tools a caller runs (see `network.capabilities.client_tools.capability`)."""

from network.capabilities.client_tools.capability import ClientTools
from network.capabilities.client_tools.options import client_tool
from network.run.client_tools import ClientTool

__all__ = ["ClientTool", "ClientTools", "client_tool"]
