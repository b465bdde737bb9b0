"""The names this package records: OpenTelemetry GenAI semantic conventions, pinned.

We follow the GenAI conventions' first standalone release, semantic-conventions-genai v0.1.0
(status "Development"; it builds on OpenTelemetry semantic conventions 1.45.0, whose schema URL
the tracer and meter carry). It defines `invoke_agent` (with `gen_ai.operation.name`
`invoke_workflow` for a workflow, named by `gen_ai.agent.name` since `gen_ai.workflow.name`
was retired), `chat` and `execute_tool` spans, `gen_ai.provider.name` and the cache-read
token count. Names of our own live under `agent_network.`.
"""

from __future__ import annotations

SEMCONV_VERSION = "0.1.0"  # of semantic-conventions-genai
SCHEMA_URL = "https://opentelemetry.io/schemas/1.45.0"  # the core conventions it builds on
INSTRUMENTATION = "agent_network"

# gen_ai.operation.name values
INVOKE_WORKFLOW = "invoke_workflow"
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
APPLY_GUARDRAIL = "apply_guardrail"

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_DESCRIPTION = "gen_ai.agent.description"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
ERROR_TYPE = "error.type"
# a guardrail's span (`apply_guardrail {name}`): its name and what it checked, as
# semantic-conventions-genai's guardrail page names them
GUARDRAIL_NAME = "gen_ai.guardrail.component.name"
GUARDRAIL_SOURCE = "gen_ai.guardrail.source"  # "input", "output", "tool_input", "tool_output"

# opt-in content (only with capture_content)
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
STATE_VALUES = "agent_network.state.values"
# a failed run's message, the root span's status description (the name `redact` sees it by)
EXCEPTION_MESSAGE = "exception.message"

# ours
RUN_ID = "agent_network.run_id"
ROLE = "agent_network.role"  # "agent" or "router"
CALL_INDEX = "agent_network.call_index"
STOP_REASON = "agent_network.stop_reason"
KEYS_WRITTEN = "agent_network.state.keys_written"
SKIPPED = "agent_network.skipped"
TOOL_ATTEMPTS = "agent_network.tool.attempts"  # tries of a call a RetryPolicy retried
BRANCH = "agent_network.branch"  # the parallel branch of an agent call (`Parallel`)
SUBAGENT_RUN_ID = "agent_network.subagent_run_id"  # the sub-run a tool call started (as_tool)
COST_USD = "agent_network.usage.cost_usd"
LIMIT = "agent_network.usage_limit"
RESUMED = "agent_network.resumed"
INTERRUPT_EVENT = "agent_network.interrupt"
RESUME_EVENT = "agent_network.resume"
# a context policy compacted the agent's request: an event on its agent span
COMPACTION_EVENT = "agent_network.context.compacted"
COMPACTION = "agent_network.context."  # prefix of the event's attributes (counts, names)
MEMORY_RECALLED_EVENT = "agent_network.memory.recalled"  # what an agent's memory recalled
MEMORY_NAMESPACE = "agent_network.memory.namespace"  # its labels joined by "/"
MEMORY_KEYS = "agent_network.memory.keys"  # the keys recalled, best first (never the texts)
MEMORY_SCORES = "agent_network.memory.scores"
MEMORY_COUNT = "agent_network.memory.count"
SUMMARY_TEXT = "agent_network.context.summary"  # the summary sent (content: opt-in)
GUARDRAIL_TRIPPED = "agent_network.guardrail.tripped"  # its tripwire fired
GUARDRAIL_REJECTED = "agent_network.guardrail.rejected"  # a tool call refused, the run went on
GUARDRAIL_CANCELLED = "agent_network.guardrail.cancelled"  # stopped before it said anything
GUARDRAIL_STOPPED = "agent_network.guardrail"  # on an agent span: the guardrail that stopped it

# a handoff (`agents.handoff`): a span of its own under its `transfer_to_...` tool span. The
# conventions name no handoff operation, so it carries ours (see network.telemetry.handoff_span)
HANDOFF = "handoff"  # the span's name is "handoff {target}", its role "handoff"
HANDOFF_SOURCE = "agent_network.handoff.source"
HANDOFF_TARGET = "agent_network.handoff.target"
HANDOFF_REASON = "agent_network.handoff.reason"  # the model's words: content, opt-in

# metrics
TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
# The bucket boundaries the conventions advise for each histogram.
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864)  # fmt: skip
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)  # fmt: skip

# litellm's provider names -> the conventions' well-known `gen_ai.provider.name` values.
_PROVIDERS = {
    "openai": "openai",
    "text-completion-openai": "openai",
    "azure": "azure.ai.openai",
    "azure_ai": "azure.ai.inference",
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "bedrock_converse": "aws.bedrock",
    "vertex_ai": "gcp.vertex_ai",
    "vertex_ai_beta": "gcp.vertex_ai",
    "gemini": "gcp.gemini",
    "groq": "groq",
    "mistral": "mistral_ai",
    "deepseek": "deepseek",
    "xai": "x_ai",
    "perplexity": "perplexity",
    "cohere": "cohere",
    "cohere_chat": "cohere",
    "watsonx": "ibm.watsonx.ai",
}


def provider_name(provider: str | None) -> str:
    """The `gen_ai.provider.name` of a model's provider (its own name when not well known)."""
    if not provider:
        return "_OTHER"
    return _PROVIDERS.get(provider, provider)


def wire_model(model: str, provider: str | None) -> str:
    """The model name a client sends on the wire: `model` less its provider prefix.

    `openai/gpt-4o-mini` is sent as `gpt-4o-mini` (both clients strip the provider part of
    the name they were given); a name without that prefix is sent as it is.
    """
    if provider and model.startswith(provider + "/") and len(model) > len(provider) + 1:
        return model[len(provider) + 1 :]
    return model
