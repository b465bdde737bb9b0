"""Typed agent output: `Agent(output_type=T)` makes the agent's final answer a validated `T`.

`T` is anything pydantic validates: a model class, `list[Model]`, `Model1 | Model2`, a
`TypedDict`, `int`... A schema whose root is not a JSON object (a list, a union, a scalar) is
sent wrapped as `{"response": <T>}`, since providers and tools want an object at the root; the
wrapper is taken off again before validation.

How the schema reaches the model (`output_mode`):

- `"native"`: the provider's structured output. The request carries `response_format`
  (`{"type": "json_schema", "json_schema": {"name", "schema", "strict": false}}`) and the
  model answers the JSON as its text.
- `"tool"`: a `final_output` tool whose parameters are the schema. With no other tools the
  agent forces it (`tool_choice="final_output"`), with tools it requires a tool call
  (`"required"`); the `final_output` call is turned into the message's text (its JSON) before
  tools run, so history never holds a call without a result.
- `"prompted"`: the schema goes into the instructions ("answer with only a JSON value that
  matches ..."); for models that support neither. Code fences around the answer are accepted.
- `"auto"` (the default) asks the model: a model object may say what it supports through a
  `structured_output` attribute (a string, or a sync/async method returning one).
  `LiteLLMModel` answers "native" when litellm says the model supports a response schema or
  when it has an `api_base` (llama.cpp, vLLM and Ollama all take `json_schema`), else "tool"
  when it supports function calling, else "prompted". `ScriptedModel` answers "native" (its
  script answers JSON text; `ScriptedModel(..., structured_output="tool")` scripts the other
  paths). Any other model gets "prompted", which needs nothing but text.

An answer that calls the agent's other tools is not a final answer: nothing is validated and
the router decides what runs next. A final answer that does not validate is asked again, at
most `output_retries` times (default 2). The retry request is the original request plus ONE
user message quoting the invalid answer and the validation errors: it replaces the previous
failed attempt, so retries never grow the conversation, and history keeps only the valid
answer. When the budget is spent, `OutputValidationError` names the agent, the attempts, every
attempt's errors and the last raw text.

`Agent(output_validators=[...])` checks a final answer (typed or text) against the run and
asks again on `Retry(reason)`, within the same `output_retries` (`validators`).

In this package: `capability` (`TypedOutput`: the model stage of a typed agent, with its
re-asks), `validators` (`ValidatedOutput`: output validators and their re-asks), and,
internal, `_spec` (`OutputSpec`: shaping the request, reading and validating the answer, the
re-ask message) and `_stream` (the answer sent as predictive state while it streams).
"""

from agents.capabilities.output._spec import OutputSpec
from agents.capabilities.output.capability import TypedOutput
from agents.capabilities.output.validators import OutputValidator, ValidatedOutput

__all__ = ["OutputSpec", "OutputValidator", "TypedOutput", "ValidatedOutput"]
