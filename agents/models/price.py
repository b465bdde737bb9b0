"""`Price`: what a model's tokens cost, in USD per million, and the cost of one request.

    OpenAIModel("openai/my-finetune", price=Price(input=0.30, output=1.20))
    OpenAIModel("openai/llama", api_base="http://127.0.0.1:8080/v1", price=Price.FREE)

A request costs its uncached prompt tokens at `input`, its cached prompt tokens (OpenAI's
`prompt_tokens_details.cached_tokens`) at `cached_input` (at `input` when that is None, as
providers that publish no cache price bill them), and its completion tokens at `output`.
Some models bill a long prompt at other rates for every token of the request (OpenAI's
gpt-5.4 above 272k prompt tokens): `long_prompt` holds those rates and `long_prompt_above`
the prompt size past which they apply (litellm's rule: strictly more tokens than that).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from network.errors import ConfigurationError
from network.history.results import Usage
from network.numbers import check_number

_PER_MILLION = 1_000_000


@dataclass(slots=True, frozen=True, kw_only=True)
class Price:
    """A model's price in USD per million tokens.

    Args:
        input: per million uncached prompt tokens.
        output: per million completion tokens (reasoning tokens included, as OpenAI bills).
        cached_input: per million cached prompt tokens; None: billed as `input`.
        long_prompt: the rates of a request whose prompt has more than `long_prompt_above`
            tokens (every token of it then costs these rates); None: one rate at any size.
        long_prompt_above: the prompt size past which `long_prompt` applies.

    A negative, non-finite or non-numeric rate is a `ConfigurationError` naming the field.
    """

    input: float
    output: float
    cached_input: float | None = None
    long_prompt: Price | None = None
    long_prompt_above: int | None = None

    FREE: ClassVar[Price]  # a server that costs nothing (a local llama.cpp, vLLM, Ollama)

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input"):
            value: Any = getattr(self, name)
            if value is None and name == "cached_input":
                continue
            check_number(f"Price.{name}", value)
        if (self.long_prompt is None) != (self.long_prompt_above is None):
            raise ConfigurationError("Price.long_prompt and Price.long_prompt_above go together")
        if self.long_prompt is not None:
            above: Any = self.long_prompt_above
            if not isinstance(self.long_prompt, Price):
                raise ConfigurationError(
                    f"Price.long_prompt must be a Price, got {self.long_prompt!r}"
                )
            check_number("Price.long_prompt_above", above, integer=True)

    def cost(self, usage: Usage) -> float:
        """What a request with `usage` costs, in USD."""
        rates = self
        if (
            self.long_prompt is not None
            and self.long_prompt_above is not None
            and usage.prompt_tokens > self.long_prompt_above
        ):
            rates = self.long_prompt
        cached = min(max(usage.cached_tokens, 0), usage.prompt_tokens)
        cached_rate = rates.input if rates.cached_input is None else rates.cached_input
        return (
            (usage.prompt_tokens - cached) * rates.input
            + cached * cached_rate
            + usage.completion_tokens * rates.output
        ) / _PER_MILLION


Price.FREE = Price(input=0.0, output=0.0)


def price_from(value: Any, model: str) -> Price | None:
    """A model's `price=` option: a `Price`, a mapping of its fields (a model described as
    data, e.g. `{"input": 0.3, "output": 1.2}`; `long_prompt` a mapping too), or None;
    anything else is a `ConfigurationError` naming the model."""
    if value is None or isinstance(value, Price):
        return value
    if isinstance(value, Mapping):
        tier = value.get("long_prompt")
        if isinstance(tier, Mapping):  # the long-prompt rates are data too
            value = {**value, "long_prompt": price_from(tier, model)}
        try:
            return Price(**value)
        except TypeError as exc:
            raise ConfigurationError(f"model {model!r}: price: {exc}") from exc
        except ConfigurationError as exc:
            raise ConfigurationError(f"model {model!r}: {exc}") from exc
    raise ConfigurationError(
        f"model {model!r}: price must be a Price or a mapping of its fields, got {value!r}"
    )
