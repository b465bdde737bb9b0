"""`Telemetry` refuses options of the wrong kind when it is made, naming the field: a string
flag was truthy (`capture_content="false"` recorded content), a wrong provider or a
`Network(telemetry=...)` that is not a `Telemetry` failed every run with an AttributeError."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network
from network.telemetry import Telemetry


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"capture_content": "false"}, "Telemetry.capture_content"),
        ({"capture_content": 0}, "Telemetry.capture_content"),
        ({"enabled": "no"}, "Telemetry.enabled"),
        ({"redact": "mask"}, "Telemetry.redact"),
        ({"tracer_provider": "http://127.0.0.1:4318"}, "Telemetry.tracer_provider"),
        ({"meter_provider": 3}, "Telemetry.meter_provider"),
    ],
)
def test_an_option_of_the_wrong_kind_is_refused_naming_it(
    options: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigurationError, match=field.replace(".", r"\.")):
        Telemetry(**options)


async def _async_redact(name: str, value: Any) -> Any:
    return None


class _AsyncRedactor:
    async def __call__(self, name: str, value: Any) -> Any:
        return None


@pytest.mark.parametrize("redact", [_async_redact, _AsyncRedactor()])
def test_an_async_redact_hook_is_refused_when_the_options_are_made(redact: Any) -> None:
    """Spans are written synchronously: an async hook was called and never awaited, and every
    content attribute was recorded as the text `<coroutine object ...>` (and Python warned
    that the coroutine was never awaited, once per attribute)."""
    with pytest.raises(ConfigurationError, match=r"Telemetry\.redact must be a plain function"):
        Telemetry(redact=redact)


def test_a_network_refuses_telemetry_that_is_not_telemetry() -> None:
    agent = Agent("echo", model=ScriptedModel(["hi"]))
    with pytest.raises(ConfigurationError, match=r"network 'n': telemetry must be"):
        Network("n", agents=[agent], telemetry={"enabled": False})  # type: ignore[arg-type]


def test_every_documented_option_is_accepted() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    options = Telemetry(
        tracer_provider=TracerProvider(),
        meter_provider=MeterProvider(),
        capture_content=False,
        redact=lambda name, value: value,
        enabled=True,
    )
    assert options.captures_content() is False
    assert Telemetry(capture_content=None, enabled=False).enabled is False
