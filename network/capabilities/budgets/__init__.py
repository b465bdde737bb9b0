"""Shared budgets in the agent step: see `network.capabilities.budgets.capability`."""

from network.capabilities.budgets.capability import Metering
from network.capabilities.budgets.metered import MeteredModel, metered

__all__ = ["MeteredModel", "Metering", "metered"]
