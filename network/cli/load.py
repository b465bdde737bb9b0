"""`FILE:NETWORK`: load a network from a Python file, for the command line.

`FILE` is a path to a Python file (loaded as a module, its directory on `sys.path` so that
it can import its neighbours); `NETWORK` the name of an attribute in it: a `Network`, or a
function of no arguments that returns one. Without `:NETWORK`, the attribute `network` is
used. Anything wrong is a `CLIError` with one line saying what.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from network.network import Network


class CLIError(Exception):
    """A problem the command line reports in one line (exit status 2)."""


def split_target(target: str) -> tuple[str, str]:
    """`"path/to/file.py:name"` -> (path, name); a bare path means attribute `network`."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or "/" in name or "\\" in name:  # no name, or a "C:\..." path
        return target, "network"
    if not name.isidentifier():
        raise CLIError(f"{name!r} in {target!r} is not a Python name (expected FILE:NETWORK)")
    return path, name


def load_network(target: str) -> Network:
    """The Network that `FILE:NETWORK` names."""
    path_text, name = split_target(target)
    path = Path(path_text)
    if not path.is_file():
        raise CLIError(f"no such file: {path_text}")
    if path.suffix != ".py":
        raise CLIError(f"{path_text} is not a Python file (.py)")
    module = _import(path)
    if not hasattr(module, name):
        found = [k for k, v in vars(module).items() if isinstance(v, Network)]
        hint = f" (networks in it: {', '.join(found)})" if found else ""
        raise CLIError(f"{path_text} has no attribute {name!r}{hint}")
    value = getattr(module, name)
    if isinstance(value, Network):
        return value
    if callable(value):
        if inspect.iscoroutinefunction(value):  # its call would be a coroutine never awaited
            raise CLIError(
                f"{path_text}:{name} is an async function: name the Network, or a plain "
                "function that returns one"
            )
        try:  # asked of its signature: a TypeError its body raises is its own failure
            inspect.signature(value).bind()
        except TypeError as exc:
            raise CLIError(f"{path_text}:{name} must take no arguments: {exc}") from None
        except ValueError:  # no signature to read (a builtin): the call says
            pass
        try:
            value = value()
        except Exception as exc:
            raise CLIError(f"{path_text}:{name}() failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(value, Network):
            return value
        raise CLIError(f"{path_text}:{name}() returned {type(value).__name__}, not a Network")
    raise CLIError(f"{path_text}:{name} is a {type(value).__name__}, not a Network")


def load_authorize(target: str) -> Any:
    """The `authorize` hook that `FILE:FUNCTION` or `MODULE:FUNCTION` (an import path,
    `myapp.auth:authorize`) names (a bare file or module means `authorize`).

    An empty `target` is an error, not "no hook": `--authorize "$HOOK"` with the variable
    unset would otherwise serve every request to anyone."""
    if not target.strip():
        raise CLIError("--authorize is empty; give MODULE:FUNCTION or FILE:FUNCTION")
    path_text, name = split_target(target)
    if ":" not in target:
        name = "authorize"
    path = Path(path_text)
    if path.is_file():
        module = _import(path)
    elif _looks_like_file(path_text):  # `hook.py`, `auth/hook`: a file meant, not a module
        if path.exists():
            raise CLIError(f"--authorize: {path_text} is not a file")
        raise CLIError(f"--authorize: no such file: {path_text}")
    elif _MODULE_PATH.fullmatch(path_text):
        try:
            module = importlib.import_module(path_text)
        except ImportError as exc:
            raise CLIError(f"--authorize: cannot import {path_text}: {exc}") from exc
    else:
        raise CLIError(f"--authorize: no such file or module: {path_text}")
    hook = getattr(module, name, None)
    if not callable(hook):
        raise CLIError(f"--authorize: {path_text} has no function {name!r}")
    try:  # called so on every request: a function that cannot be would fail each one (500)
        inspect.signature(hook).bind(None, None)
    except TypeError:
        raise CLIError(
            f"--authorize: {path_text}:{name} cannot be called as authorize(request, thread_id)"
        ) from None
    except ValueError:  # no signature to read (a builtin): it is tried on the first request
        pass
    return hook


_MODULE_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _looks_like_file(text: str) -> bool:
    """Whether `text` names a file rather than a module: a `.py` name or a path (`hook.py`
    is a valid dotted name too, whose import would fail saying no module `hook`)."""
    return text.endswith(".py") or "/" in text or "\\" in text


def store_option(text: str | None) -> str | None:
    """`--store`: a database URL, an SQLite path, or `sqlite:PATH` (the path, spelled as a
    scheme); None means the default store."""
    if text is None:
        return None
    if not text.strip():
        raise CLIError("--store is empty; give an SQLite path or a database URL")
    if text.startswith("sqlite:") and not text.startswith("sqlite://"):
        path = text[len("sqlite:") :]
        if not path.strip():  # refused by the store as "app: store= is an empty string"
            raise CLIError(f"--store {text!r} names no file; give sqlite:PATH")
        return path
    return text


def module_name_of(resolved: Path) -> str:
    """The name a FILE target is imported under: the same for a path in every process. A
    durable run records with pickle the values of classes the file defines (a state value,
    a tool's result), by this module name; `hash()` of the path, which Python salts anew in
    each process, gave each worker another name, so a run resumed on another worker failed
    (`ModuleNotFoundError`) on the first such value it replayed."""
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()
    return f"_agent_network_cli_{digest[:20]}"


def _import(path: Path) -> Any:
    resolved = path.resolve()
    module_name = module_name_of(resolved)
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    # first on the path, once: `dev --reload` loads the file again on every change
    directory = str(resolved.parent)
    while directory in sys.path:
        sys.path.remove(directory)
    sys.path.insert(0, directory)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:
        raise CLIError(f"{path} exited while being imported (status {exc.code})") from exc
    except Exception as exc:
        raise CLIError(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc
    return module
