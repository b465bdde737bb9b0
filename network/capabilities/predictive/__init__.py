"""Predictive state (`Network(predict_state=...)`): a state key shows a tool's argument as it
streams, and takes its value when the tool runs. See docs/agui.md."""

from network.capabilities.predictive.capability import PredictiveState

__all__ = ["PredictiveState"]
