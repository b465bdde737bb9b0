"""`check_max_iter`: a cap of 0 is refused saying that it is not "no limit", and what to write."""

from __future__ import annotations

from typing import Any

import pytest

from agents import Agent, ScriptedModel
from network import ConfigurationError, Network

pytestmark = pytest.mark.anyio

NOT_NO_LIMIT = r"got 0 \(0 is not 'no limit', as AgentKit's maxIter is: every run has a cap; "


def _agent() -> Agent:
    return Agent("a", model=ScriptedModel(["Hi."]))


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            lambda: Network("n", agents=[_agent()], max_iter=0),
            "leave it out for the default \\(100\\),",
        ),
        (
            lambda: Network("n", agents=[_agent()]).run("x", max_iter=0),
            "leave it out for the network's,",
        ),
        (lambda: _agent().run("x", max_steps=0), "leave it out for the default \\(10\\),"),
        (lambda: _agent().as_tool(max_steps=0), "leave it out for the default \\(10\\),"),
        (
            lambda: Network("inner", agents=[_agent()]).as_tool(max_iter=0),
            "leave it out for the network's own,",
        ),
    ],
    ids=["Network", "run", "Agent.run", "Agent.as_tool", "Network.as_tool"],
)
async def test_a_cap_of_0_says_it_is_no_no_limit_and_what_to_write(make: Any, says: str) -> None:
    # before: "max_iter must be an int >= 1, got 0", which an AgentKit user (whose maxIter 0
    # means no limit) reads as a bug in the check
    with pytest.raises(ConfigurationError, match=NOT_NO_LIMIT + says + " or give the most agent"):
        made = make()
        if hasattr(made, "__await__"):
            await made


def test_other_bad_caps_keep_the_plain_message() -> None:
    with pytest.raises(ConfigurationError, match=r"max_iter must be an int >= 1, got -1$"):
        Network("n", agents=[_agent()], max_iter=-1)
