"""State progress: what a running tool writes to state reaches a live client each time the
tool waits, before it returns. See docs/agui.md ("State while a tool runs")."""

from network.capabilities.progress.capability import StateProgress

__all__ = ["StateProgress"]
