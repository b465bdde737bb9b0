"""What each agent sees of the conversation (`Agent(view=...)`, `Network(view=...)`): all of
it with other agents' turns shown as what they are, only this run's input, or a function."""

from network.capabilities.view.capability import VIEWS, ConversationView, as_context

__all__ = ["VIEWS", "ConversationView", "as_context"]
