"""The conventions' client metrics, recorded per model request.

`gen_ai.client.operation.duration` (seconds) and `gen_ai.client.token.usage` (tokens, with
`gen_ai.token.type` input / output), each with the operation, provider, request and response
models, the agent (`gen_ai.agent.name`) and, for a failed request, `error.type`.
"""

from __future__ import annotations

from typing import Any

from network.telemetry import conventions as c
from network.telemetry._otlp_text import otlp_attributes


class Instruments:
    """The two histograms, made once per meter provider."""

    def __init__(self, meter: Any) -> None:
        self.duration = meter.create_histogram(
            c.OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=c.DURATION_BUCKETS,
        )
        self.tokens = meter.create_histogram(
            c.TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=c.TOKEN_BUCKETS,
        )

    def record(self, call: Any, agent: str) -> None:
        """Record one model request (`network.history.results.ModelCall`)."""
        attributes: dict[str, Any] = {
            c.OPERATION: c.CHAT,
            c.PROVIDER: c.provider_name(call.provider),
            c.REQUEST_MODEL: c.wire_model(call.model, call.provider),
            c.AGENT_NAME: agent,
        }
        if call.response_model:
            attributes[c.RESPONSE_MODEL] = call.response_model
        if call.error:
            attributes[c.ERROR_TYPE] = call.error
        attributes = otlp_attributes(attributes)  # a model's name may hold a lone surrogate
        self.duration.record(call.duration_ms / 1000, attributes)
        if call.error:
            return
        usage = call.usage
        self.tokens.record(usage.prompt_tokens, {**attributes, c.TOKEN_TYPE: "input"})
        self.tokens.record(usage.completion_tokens, {**attributes, c.TOKEN_TYPE: "output"})
