"""Servers that refuse `response_format`: told apart from other failures, never retried.

An agent's `output_type` in native mode sends `response_format` with a JSON schema. Not every
OpenAI-compatible server takes it: llama-cpp-python's answers 500 with a validation message
naming `response_format` (it takes `json_object` only); others answer 400 or 422. Retrying
cannot help, so such a failure is a `ResponseFormatRefused` at once, and the model remembers
it (`refuses_response_format`): an agent in `output_mode="auto"` then asks again in tool mode
(`agents.capabilities.output.capability`), and later requests go to tool mode straight away.
"""

from __future__ import annotations

from agents.models._failures import Failure
from agents.models.base import ModelRequest
from network.errors import ModelError

# The statuses a server answers an unsupported request field with (llama-cpp-python: 500).
_REFUSAL_STATUS = frozenset({400, 422, 500})
_WORDS = ("response_format", "json_schema")


class ResponseFormatRefused(ModelError):
    """The server refused the request's `response_format` (structured output).

    The request was sent and answered, and an agent in `output_mode="auto"` goes past it: a
    shared budget counts it as a request made (`counted_as_request`), as usage limits do."""

    counted_as_request = True


def refuses_response_format(request: ModelRequest, failure: Failure) -> bool:
    """Whether `failure` is the server refusing the `response_format` the request sent."""
    if request.response_format is None or failure.status not in _REFUSAL_STATUS:
        return False
    detail = failure.detail.lower()
    return any(word in detail for word in _WORDS)
