"""The event emitter: where a run's events go (sinks), checked when the run starts."""

from __future__ import annotations

import pytest

from network import ConfigurationError, Network
from tests.fakes.agents import solo

pytestmark = pytest.mark.usefixtures("quiet_logs")


@pytest.mark.anyio
async def test_a_plain_function_works_as_a_sink() -> None:
    seen: list[str] = []
    result = await Network("n", agents=[solo("hi")]).run(
        "go", sinks=[lambda e: seen.append(e.type)]
    )
    assert result.output == "hi"
    assert seen[0] == "RUN_STARTED" and seen[-1] == "RUN_FINISHED"


@pytest.mark.anyio
async def test_a_sink_that_is_not_callable_is_refused_clearly() -> None:
    with pytest.raises(ConfigurationError, match="event sink 42 is not callable"):
        await Network("n", agents=[solo("hi")]).run("go", sinks=[42])  # type: ignore[list-item]


@pytest.mark.anyio
@pytest.mark.parametrize("sinks", [42, print, "stdout"])
async def test_sinks_that_are_no_list_are_refused_clearly(sinks: object) -> None:
    """`sinks=print` (one sink, not a list of them) was `TypeError: 'builtin_function_or_method'
    object is not iterable`; `sinks="stdout"` said its first character was no sink."""
    with pytest.raises(ConfigurationError, match="sinks must be a list of event sinks"):
        await Network("n", agents=[solo("hi")]).run("go", sinks=sinks)  # type: ignore[arg-type]
