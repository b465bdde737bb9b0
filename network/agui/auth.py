"""Who may run on which thread: the `authorize` hook and thread ownership.

They are the serving layer's (`network.serving.principals`), shared by every protocol
server; this module keeps the names where the AG-UI server has always shown them.
"""

from network.serving.principals import Authorize, Forbidden, Unauthorized

__all__ = ["Authorize", "Forbidden", "Unauthorized"]
