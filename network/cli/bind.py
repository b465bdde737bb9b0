"""Where a command's server listens, and the warning when that is not this machine only.

The AG-UI server and the dev UI run whatever network they serve for anyone who can reach
them, and the dev UI shows every stored thread: both bind 127.0.0.1 unless told otherwise,
and say so loudly when told otherwise.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
from typing import TextIO

LOOPBACK_NAMES = ("localhost",)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0")
"""The `Host` header values a server bound to loopback accepts by default (0.0.0.0: a URL some
tools print, which reaches this machine): a page whose own name resolves to 127.0.0.1 (DNS
rebinding) is refused, though the browser lets it call."""


def port_number(text: str) -> int:
    """`--port`'s value: an integer from 0 to 65535 (0: any free port), else argparse's
    one-line error (a port no socket can have ended in a traceback, or a server that said it
    ran and exited)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 65535, got {text!r}")
    return port


def host_name(text: str) -> str:
    """`--host`'s value: a name or an address, else argparse's one-line error. An empty one
    (`--host "$HOST"` with the variable unset) would bind every interface of the machine."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"must name an address (0.0.0.0 for every interface), got {text!r}"
        )
    return text


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) only listens on this machine."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str, what: str, stream: TextIO | None = None) -> bool:
    """Print a warning on stderr when `host` is not a loopback address; whether it did."""
    if is_loopback(host):
        return False
    print(
        f"WARNING: {what} is bound to {host}, not 127.0.0.1: anyone who can reach this "
        "address can run the network (spending its model budget, calling its tools) and read "
        "what it serves. Bind 127.0.0.1 unless this machine's network is trusted.",
        file=stream or sys.stderr,
    )
    return True


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` (port 0: a free one), ready for uvicorn."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
