"""The server's in-memory thread registry: the serving layer's (`network.serving.registry`),
kept under the name the AG-UI server has always shown it by."""

from network.serving.registry import ThreadRecord, ThreadRegistry

__all__ = ["ThreadRecord", "ThreadRegistry"]
