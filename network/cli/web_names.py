"""`serve`'s `--cors-origin` and `--allowed-host` values, checked when they are parsed.

Both are compared as written with what a browser sends (`Origin: https://app.example`, `Host:
app.example:8443`), so a value that can never equal one (a trailing slash, a path, a port in a
host name) used to start a server that refused every browser it was meant to let in, with no
word of why. Each is refused instead, by argparse, naming the option.
"""

from __future__ import annotations

import argparse
import ipaddress
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def cors_origin(text: str) -> str:
    """`--cors-origin`: an origin as a browser's `Origin` header spells it, `SCHEME://HOST`
    or `SCHEME://HOST:PORT` (scheme and host lowercased, a scheme's default port dropped,
    as a browser sends them); anything else is argparse's error."""
    refused = argparse.ArgumentTypeError(
        f"{text!r} is not an origin: give SCHEME://HOST[:PORT] with no path, as a browser "
        "sends it (https://app.example); repeat the option for each origin"
    )
    if text != text.strip() or "*" in text:
        raise refused
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        raise refused from None
    if not parts.scheme or not parts.hostname or parts.path or parts.query or parts.fragment:
        raise refused
    if "@" in parts.netloc or text.endswith(("?", "#")):
        raise refused
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    scheme = parts.scheme.lower()
    if port is None or DEFAULT_PORTS.get(scheme) == port:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def allowed_host(text: str) -> str:
    """`--allowed-host`: a host name as the `Host` header names it, without its port (the
    port is not compared) or scheme (`app.example`, `*.example.com`, `[::1]`; `::1` is
    bracketed), lowercased; anything else is argparse's error."""
    name = text.lower()
    try:
        if ipaddress.ip_address(name).version == 6:
            name = f"[{name}]"  # as the header spells it (`Host: [::1]:8000`)
    except ValueError:
        pass
    bracketed = name.startswith("[") and name.endswith("]")
    if (
        not name
        or name != name.strip()
        or any(c in name for c in "/@?#\\ ")
        or (":" in name and not bracketed)
    ):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a host name: give it as the Host header names it, without a "
            "scheme, a port or a path (app.example)"
        )
    return name
