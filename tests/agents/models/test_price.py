"""A price given as data (a model described as a mapping) says all that a `Price` says: its
long-prompt rates too, themselves a mapping."""

from __future__ import annotations

import pytest

from agents import OpenAIModel, Price
from network import ConfigurationError


def test_long_prompt_rates_as_data() -> None:
    data = {
        "input": 1.0,
        "output": 2.0,
        "long_prompt": {"input": 3.0, "output": 4.0},
        "long_prompt_above": 1000,
    }
    model = OpenAIModel("openai/x", api_base="http://127.0.0.1:1/v1", price=data)
    tier = Price(input=3.0, output=4.0)
    assert model.price == Price(input=1.0, output=2.0, long_prompt=tier, long_prompt_above=1000)


def test_bad_long_prompt_rates_as_data_name_the_model_and_the_field() -> None:
    data = {"input": 1, "output": 2, "long_prompt": {"input": -3, "output": 4}}
    with pytest.raises(ConfigurationError, match=r"model 'openai/x': Price.input must be"):
        OpenAIModel(
            "openai/x", api_base="http://127.0.0.1:1/v1", price=data | {"long_prompt_above": 9}
        )
