"""Networks for `agent-network replay` and `agent-network eval`: the replay tests' codegen
team, as recorded and with its coder's prompt changed (same app name: it replays the same
threads)."""

from network import Network
from tests.network.capabilities.replay.teams import CODER, codegen

network = codegen()


def careful() -> Network:
    """The team with one word added to the coder's instructions."""
    return codegen(coder_prompt=CODER.replace("Python code", "careful Python code"))
