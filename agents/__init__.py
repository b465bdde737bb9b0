"""Agents, tools and models.

`ToolCall` (what a model asked for) and `Interrupt` (a tool call waiting for a person) are
`network`'s, named here too: a user writing agents and tools looks for them here."""

from agents.agent import Agent
from agents.capabilities.context import ContextPolicy
from agents.capabilities.handoffs import Handoff, handoff, without_tool_calls
from agents.capabilities.hooks import AgentCall, AgentHooks
from agents.capabilities.mcp import MCPServer, MCPServerError
from agents.models import (
    Model,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    call,
    make_model,
)
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from agents.models.price import Price
from agents.tools.checks import ToolDefinitionWarning
from agents.tools.files import FileWriteError, files_to_disk, write_files_tool
from agents.tools.tool import Tool, tool
from agents.tools.tool_context import ToolContext
from network.capabilities.client_tools import ClientTool, client_tool
from network.capabilities.guardrails import (
    GuardrailResult,
    input_guardrail,
    output_guardrail,
    tool_input_guardrail,
    tool_output_guardrail,
)
from network.errors import Retry
from network.history.messages import ToolCall
from network.run.interrupts import Interrupt
from network.run.retry_policy import RetryPolicy

__all__ = [
    "Agent",
    "AgentCall",
    "AgentHooks",
    "ClientTool",
    "ContextPolicy",
    "FileWriteError",
    "GuardrailResult",
    "Handoff",
    "Interrupt",
    "LiteLLMModel",
    "MCPServer",
    "MCPServerError",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "Price",
    "ReasoningDelta",
    "Retry",
    "RetryPolicy",
    "ScriptedModel",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolContext",
    "ToolDefinitionWarning",
    "call",
    "client_tool",
    "files_to_disk",
    "handoff",
    "input_guardrail",
    "make_model",
    "output_guardrail",
    "tool",
    "tool_input_guardrail",
    "tool_output_guardrail",
    "without_tool_calls",
    "write_files_tool",
]
