"""Agents, tools and models.

`ToolCall` (what a model asked for) and `Interrupt` (a tool call waiting for a person) are
`network`'s, named here too: a user writing agents and tools looks for them here."""

from agents.agent import Agent
from agents.capabilities.context.policy import ContextPolicy
from agents.capabilities.handoffs.options import Handoff, handoff, without_tool_calls
from agents.capabilities.hooks.options import AgentHooks
from agents.capabilities.mcp.errors import MCPServerError
from agents.capabilities.mcp.server import MCPServer
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
from agents.models._response_format import ResponseFormatRefused
from agents.models.a2a import A2AModel
from agents.models.litellm_model import LiteLLMModel
from agents.models.openai_native import OpenAIModel
from agents.models.price import Price
from agents.tools.checks import ToolDefinitionWarning
from agents.tools.files import FileWriteError, files_to_disk, write_files_tool
from agents.tools.tool import Tool, tool
from agents.tools.tool_context import ToolContext
from network.capabilities.client_tools.options import client_tool
from network.capabilities.guardrails.decorators import (
    input_guardrail,
    output_guardrail,
    tool_input_guardrail,
    tool_output_guardrail,
)
from network.errors import Retry
from network.history.messages import ToolCall
from network.run.agent_call import AgentCall
from network.run.client_tools import ClientTool
from network.run.guardrails import GuardrailResult
from network.run.interrupts import Interrupt
from network.run.retry_policy import RetryPolicy

__all__ = [
    "A2AModel",
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
    "ResponseFormatRefused",
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
