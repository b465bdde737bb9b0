"""What the native client's requests cost: litellm's offline price map read without litellm,
an explicit `price=`, a server of one's own unpriced, and `max_cost_usd` on native runs.

The fake server stands in for OpenAI's own endpoint through `OPENAI_BASE_URL` (no `api_base`):
given an `api_base`, a server is the user's own and is priced only by `price=`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from agents import Agent, OpenAIModel, Price, tool
from agents.models import make_model, resolve_model
from agents.models._price_map import price_of, read_map
from agents.models.base import ModelRequest
from network import (
    ConfigurationError,
    Network,
    StopReason,
    UnpricedModelWarning,
    UsageLimits,
)
from network.history.messages import UserMessage
from network.history.results import Usage
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.litellm]
pytest_plugins = ["tests.fakes.openai_server"]

ROOT = Path(__file__).resolve().parents[3]
USAGE = {
    "prompt_tokens": 1000,
    "completion_tokens": 500,
    "total_tokens": 1500,
    "prompt_tokens_details": {"cached_tokens": 300},
}


def litellm_cost(model: str, prompt: int, completion: int, cached: int = 0) -> float:
    """litellm's own price for the same usage (litellm imported here, in the test only, on
    its offline map as the library imports it: else it first fetches the map online, and
    sleeps between retries where there is no network)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    prompt_cost, completion_cost = litellm.cost_per_token(
        model=model,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read_input_tokens=cached,
    )
    return float(prompt_cost) + float(completion_cost)


def request() -> ModelRequest:
    return ModelRequest(system=[], history=[UserMessage("Hi.")])


@pytest.fixture
def openai_endpoint(openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake server as OpenAI's own endpoint (`OPENAI_BASE_URL`), with a key."""
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return openai_server.base_url


@pytest.mark.parametrize("name", ["openai/gpt-4o-mini", "gpt-4o-mini"])
@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
async def test_a_known_model_costs_what_litellm_says(
    openai_server: FakeOpenAIServer, openai_endpoint: str, name: str, streamed: bool
) -> None:
    openai_server.add_text("Hello.", usage=USAGE)
    model = OpenAIModel(name, stream=streamed)
    response = await model.complete(request())
    assert response.usage.cached_tokens == 300
    expected = litellm_cost("openai/gpt-4o-mini", 1000, 500, cached=300)
    assert expected > 0
    assert response.cost_usd == pytest.approx(expected, rel=1e-12)
    assert openai_server.requests[0]["model"] == "gpt-4o-mini"


async def test_a_long_prompt_costs_its_own_rate_as_litellm_says(
    openai_server: FakeOpenAIServer, openai_endpoint: str
) -> None:
    long_usage = {"prompt_tokens": 300_000, "completion_tokens": 1000, "total_tokens": 301_000}
    short_usage = {"prompt_tokens": 200_000, "completion_tokens": 1000, "total_tokens": 201_000}
    openai_server.add_text("Long.", usage=long_usage).add_text("Short.", usage=short_usage)
    model = OpenAIModel("openai/gpt-5.4")
    long_answer = await model.complete(request())
    short_answer = await model.complete(request())
    long_cost = litellm_cost("openai/gpt-5.4", 300_000, 1000)
    short_cost = litellm_cost("openai/gpt-5.4", 200_000, 1000)
    assert long_answer.cost_usd == pytest.approx(long_cost, rel=1e-12)
    assert short_answer.cost_usd == pytest.approx(short_cost, rel=1e-12)
    assert long_cost / 300_000 > short_cost / 200_000  # the long-prompt rate is a real step


def test_names_map_as_litellm_maps_them() -> None:
    usage = Usage(1000, 500, 1500)
    for name in (
        "openai/gpt-4o",
        "o1",
        "ft:gpt-4o-mini-2024-07-18:acme:x:abc123",
        "deepseek/deepseek-chat",
    ):
        price = price_of(name)
        assert price is not None, name
        assert price.cost(usage) == pytest.approx(litellm_cost(name, 1000, 500), rel=1e-12)
    assert price_of("openai/no-such-model") is None
    assert price_of("hosted_vllm/gpt-4o-mini") is None  # a self-hosted provider: no price
    assert price_of("anthropic/claude-sonnet-4-5") is None  # not a native provider


async def test_an_explicit_price_wins_over_the_map(
    openai_server: FakeOpenAIServer, openai_endpoint: str
) -> None:
    openai_server.add_text("Hello.", usage=USAGE).add_text("Again.", usage=USAGE)
    price = Price(input=2.0, cached_input=0.5, output=8.0)
    model = OpenAIModel("openai/gpt-4o-mini", price=price)
    response = await model.complete(request())
    assert response.cost_usd == pytest.approx((700 * 2.0 + 300 * 0.5 + 500 * 8.0) / 1e6)
    # The same, described as data (what a model string's options or the CLI carry).
    described = resolve_model(
        {"model": "openai/gpt-4o-mini", "price": {"input": 2.0, "cached_input": 0.5, "output": 8}}
    )
    assert isinstance(described, OpenAIModel) and described.price == price
    assert (await described.complete(request())).cost_usd == response.cost_usd


async def test_an_explicit_price_wins_on_both_clients(
    openai_server: FakeOpenAIServer, client: Callable[..., Any]
) -> None:
    openai_server.add_text("Hello.", usage=USAGE)
    model = client(openai_server.base_url, price=Price(input=1.0, output=4.0))
    response = await model.complete(request())
    assert response.cost_usd == pytest.approx((1000 * 1.0 + 500 * 4.0) / 1e6)


async def test_a_server_of_ones_own_is_unpriced_unless_given_a_price(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.add_text("Hello.", usage=USAGE).add_text("Free.", usage=USAGE)
    own = OpenAIModel("openai/gpt-4o-mini", api_base=openai_server.base_url, api_key="x")
    assert (await own.complete(request())).cost_usd is None
    free = make_model("openai/gpt-4o-mini", api_base=openai_server.base_url, price=Price.FREE)
    assert (await free.complete(request())).cost_usd == 0.0


def test_bad_prices_are_refused_naming_the_field_or_the_model() -> None:
    with pytest.raises(
        ConfigurationError, match=r"Price.input must be a finite number >= 0, got -1"
    ):
        Price(input=-1, output=1)
    with pytest.raises(
        ConfigurationError, match=r"Price.output must be a finite number >= 0, got nan"
    ):
        Price(input=1, output=float("nan"))
    with pytest.raises(ConfigurationError, match=r"Price.cached_input .* got '0.1'"):
        Price(input=1, output=1, cached_input="0.1")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="long_prompt and Price.long_prompt_above"):
        Price(input=1, output=1, long_prompt=Price(input=2, output=2))
    with pytest.raises(ConfigurationError, match=r"model 'openai/x': price must be a Price"):
        OpenAIModel("openai/x", price=0.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"model 'openai/x': .*'dollars'"):
        OpenAIModel("openai/x", price={"dollars": 1})


def test_a_hostile_price_map_prices_only_what_it_states_well(tmp_path: Path) -> None:
    entries: dict[str, Any] = {
        "good": {"litellm_provider": "openai", "input_cost_per_token": 1e-6,
                 "output_cost_per_token": 2e-6},
        "negative": {"litellm_provider": "openai", "input_cost_per_token": -1e-6,
                     "output_cost_per_token": 2e-6},
        "text": {"litellm_provider": "openai", "input_cost_per_token": "1e-6",
                 "output_cost_per_token": 2e-6},
        "boolean": {"litellm_provider": "openai", "input_cost_per_token": True,
                    "output_cost_per_token": 2e-6},
        "no-rates": {"litellm_provider": "openai", "mode": "chat"},
        "elsewhere": {"litellm_provider": "anthropic", "input_cost_per_token": 1e-6,
                      "output_cost_per_token": 2e-6},
        "not-an-entry": [1, 2],
        "huge": {"litellm_provider": "openai", "input_cost_per_token": 1e308,
                 "output_cost_per_token": 1e-6},
    }  # fmt: skip
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(entries))
    catalog = read_map(path)
    assert set(catalog) == {"openai/good"}
    assert catalog["openai/good"] == Price(input=1.0, output=2.0)
    path.write_text("[not json")
    assert read_map(path) == {}
    path.write_text("[]")
    assert read_map(path) == {}
    assert read_map(tmp_path / "missing.json") == {}


@tool
def again() -> str:
    """Keep going."""
    return "ok"


async def test_max_cost_usd_stops_a_native_run(
    openai_server: FakeOpenAIServer, openai_endpoint: str, quiet_logs: None
) -> None:
    usage = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}
    for _ in range(3):
        openai_server.add_tool_calls(FakeToolCall("again", {}), usage=usage)
    agent = Agent("spender", tools=[again], model="openai/gpt-4o-mini")
    network = Network("costly", agents=[agent], router=lambda ctx: agent)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpricedModelWarning)  # priced: never warns
        result = await network.run("Spend.", limits=UsageLimits(max_cost_usd=0.0005))
    assert result.stop_reason == StopReason.USAGE_LIMIT
    per_call = result.results[0].model_calls[0].cost_usd
    assert per_call == pytest.approx(litellm_cost("openai/gpt-4o-mini", 1000, 500))
    assert len(result.results) == 2  # 0.00045 after one request: below; 0.0009: reached
    assert result.limit_exceeded is not None
    assert result.limit_exceeded.limit == "max_cost_usd"
    assert result.limit_exceeded.figures.unpriced == 0
    assert len(openai_server.requests) == 2


async def test_a_cost_capped_run_warns_once_per_unpriced_model(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    for _ in range(3):
        openai_server.add_tool_calls(FakeToolCall("again", {}))
    model = OpenAIModel("openai/local", api_base=openai_server.base_url)
    agent = Agent("local", tools=[again], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent)
    limits = UsageLimits(max_cost_usd=0.01, max_model_calls=3)
    with capture_logs() as logs, pytest.warns(UnpricedModelWarning) as caught:
        result = await network.run("Hi.", limits=limits)
    assert result.limit_exceeded is not None and result.limit_exceeded.limit == "max_model_calls"
    assert result.limit_exceeded.figures.unpriced == 3
    unpriced = [w for w in caught if issubclass(w.category, UnpricedModelWarning)]
    assert len(unpriced) == 1
    assert "model 'openai/local' has no known price" in str(unpriced[0].message)
    assert [(log["event"], log["model"]) for log in logs if log["log_level"] == "warning"] == [
        ("usage_limits.unpriced_model", "openai/local")
    ]


async def test_the_unpriced_warning_as_an_error_stops_the_run_before_its_next_request(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    for _ in range(3):
        openai_server.add_tool_calls(FakeToolCall("again", {}))
    model = OpenAIModel("openai/local", api_base=openai_server.base_url)
    agent = Agent("local", tools=[again], model=model)
    network = Network("n", agents=[agent], router=lambda ctx: agent)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpricedModelWarning)
        with pytest.raises(UnpricedModelWarning, match="'openai/local'"):
            await network.run("Hi.", limits=UsageLimits(max_cost_usd=0.01))
    assert len(openai_server.requests) == 1


async def test_without_a_cost_cap_an_unpriced_model_never_warns(
    openai_server: FakeOpenAIServer, quiet_logs: None
) -> None:
    openai_server.add_text("Hi.")
    model = OpenAIModel("openai/local", api_base=openai_server.base_url)
    network = Network("n", agents=[Agent("local", model=model)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpricedModelWarning)
        result = await network.run("Hi.", limits=UsageLimits(max_model_calls=5))
    assert result.stop_reason == StopReason.ROUTER_FINISHED


def test_pricing_reads_the_map_without_importing_litellm(
    openai_server: FakeOpenAIServer,
) -> None:
    """In a fresh process: importing and building costs nothing; a priced answer reads the
    map, and litellm is never imported."""
    openai_server.add_text("Hello.", usage=USAGE)
    probe = (
        "import sys, anyio\n"
        "from agents import OpenAIModel\n"
        "from agents.models import _price_map as price_map\n"
        "from agents.models.base import ModelRequest\n"
        "from network.history.messages import UserMessage\n"
        "model = OpenAIModel('openai/gpt-4o-mini', api_key='sk-test')\n"
        "before = price_map._catalog is None\n"
        "request = ModelRequest(system=[], history=[UserMessage('Hi.')])\n"
        "response = anyio.run(model.complete, request)\n"
        "print(before, response.cost_usd, 'litellm' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**_env(), "OPENAI_BASE_URL": openai_server.base_url},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    before, cost, litellm_loaded = done.stdout.split()
    assert before == "True"  # nothing read before the first answer
    assert float(cost) == pytest.approx(litellm_cost("openai/gpt-4o-mini", 1000, 500, 300))
    assert litellm_loaded == "False"


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONPATH"] = str(ROOT)
    return env
