"""Every name in the three `__all__` lists imports, and the README's paths exist."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("package", ["network", "agents", "routers"])
def test_every_name_in_all_imports(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, package
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)
    assert set(module.__all__) <= set(namespace)


def test_the_network_drawing_is_one_function_under_two_addresses() -> None:
    import network.drawing
    import routers
    import routers.mermaid

    assert routers.network_mermaid is network.drawing.network_mermaid
    assert routers.mermaid.MermaidIds is network.drawing.MermaidIds


def test_interrupt_and_tool_call_are_found_at_the_top_level() -> None:
    import agents
    import network
    from network.history.messages import ToolCall
    from network.run.interrupts import Interrupt

    assert agents.Interrupt is network.Interrupt is Interrupt
    assert agents.ToolCall is network.ToolCall is ToolCall


def test_the_telemetry_options_are_found_at_the_top_level() -> None:
    """docs/telemetry.md imports `Telemetry` from `network`, as every name its blocks use."""
    import network
    import network.telemetry

    assert "Telemetry" in network.__all__
    assert network.Telemetry is network.telemetry.Telemetry
