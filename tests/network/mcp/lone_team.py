"""A network whose model answers with a lone surrogate (as a custom `Model` may), served by
tests/network/mcp/test_serve.py."""

from __future__ import annotations

from agents import Agent, ScriptedModel
from network import Network

network = Network(
    "lone",
    agents=[
        Agent("talker", model=ScriptedModel(lambda request: "bad \ud800 text"), output_key="said")
    ],
)
