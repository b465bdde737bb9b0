"""Which model and endpoint a command puts the network's agents on: `--model`, `--api-base`,
`--api-key`, `--param`.

Every command that runs a network (`run`, `serve`, and any later one) adds the same flags with
`add_endpoint_options` and applies them with `endpoint_override`, so they mean one thing
everywhere. Each flag has an environment variable, used when the flag is absent:

| flag                   | environment variable                       |
|------------------------|--------------------------------------------|
| `--model M`            | `AGENT_NETWORK_MODEL`                      |
| `--api-base URL`       | `AGENT_NETWORK_API_BASE`                   |
| `--api-key KEY`        | `AGENT_NETWORK_API_KEY`                    |
| `--param key=value`    | `AGENT_NETWORK_PARAMS` (a JSON object)     |

`--param` repeats; a value is read as JSON when it parses (`temperature=0.2` is a number,
`stop=["\\n"]` a list) and as a string otherwise. Flags win over the environment, key by key
for params.

How an agent's model changes (a router with a `model`, such as `routing_agent`, the same):

- `--model` names the model; an agent's own endpoint (`api_base`, `api_key`, params of a
  `LiteLLMModel`) is kept unless `--api-base` / `--api-key` / `--param` replace it, so
  `--model` alone never sends an agent that had its own server somewhere else.
- `--api-base` / `--api-key` / `--param` without `--model` keep each agent's model name and
  point it at the endpoint. An agent on an object that has no endpoint (a `ScriptedModel`) is
  left as it is unless `--model` is given.

An overridden model is described as data, a dict of `make_model` arguments that the agents
layer resolves (`agents.models.registry`): `network` never imports the model classes.

The key is a secret: it is never printed, `Endpoint`'s repr hides it, and `redact` takes it
out of error text before the command line shows it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from network.cli.load import CLIError
from network.network import Network
from network.numbers import checked_params

ENV_MODEL = "AGENT_NETWORK_MODEL"
ENV_API_BASE = "AGENT_NETWORK_API_BASE"
ENV_API_KEY = "AGENT_NETWORK_API_KEY"
ENV_PARAMS = "AGENT_NETWORK_PARAMS"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The model overrides one command applies; all empty means "as the file says"."""

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether anything is overridden."""
        return bool(self.model or self.api_base or self.api_key or self.params)

    @property
    def reconfigures(self) -> bool:
        """Whether the endpoint itself (not only the model name) changes."""
        return bool(self.api_base or self.api_key or self.params)

    def redact(self, text: str) -> str:
        """`text` with the API key replaced by `***`."""
        if self.api_key:
            return text.replace(self.api_key, "***")
        return text


class RedactingWriter:
    """A text stream that writes to `stream` with `endpoint`'s key taken out."""

    def __init__(self, stream: TextIO, endpoint: Endpoint) -> None:
        self.stream = stream
        self.endpoint = endpoint

    def write(self, text: str) -> int:
        """Write `text`, redacted."""
        return self.stream.write(self.endpoint.redact(text))

    def flush(self) -> None:
        """Flush the stream."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal (rich asks, to choose colours)."""
        return self.stream.isatty()

    def fileno(self) -> int:
        """The stream's file descriptor."""
        return self.stream.fileno()


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """Add `--model`, `--api-base`, `--api-key` and `--param` to a command's parser."""
    group = parser.add_argument_group("model and endpoint (flags win over the env variables)")
    group.add_argument(
        "--model",
        help=f"a model string for every agent, e.g. openai/gpt-4o-mini (env {ENV_MODEL})",
    )
    group.add_argument(
        "--api-base",
        metavar="URL",
        help=f"the OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 (env {ENV_API_BASE})",
    )
    group.add_argument(
        "--api-key", metavar="KEY", help=f"the endpoint's key, never printed (env {ENV_API_KEY})"
    )
    group.add_argument(
        "--param",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help=f"a model parameter, repeatable; VALUE is JSON when it parses (env {ENV_PARAMS})",
    )


def parse_param(text: str) -> tuple[str, Any]:
    """`"temperature=0.2"` -> `("temperature", 0.2)`; a value that is not JSON is a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise CLIError(f"--param {text!r} is not KEY=VALUE")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply for the parser
        value = raw
    return key, value


def endpoint_from_args(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> Endpoint:
    """The command's `Endpoint`: its flags, else the environment variables."""
    env = os.environ if environ is None else environ
    params: dict[str, Any] = {}
    env_params = env.get(ENV_PARAMS)
    if env_params:
        try:
            loaded = json.loads(env_params)
        except ValueError as exc:
            raise CLIError(f"{ENV_PARAMS} is not valid JSON: {exc}") from exc
        except RecursionError:
            raise CLIError(f"{ENV_PARAMS} is not valid JSON: nested too deeply") from None
        if not isinstance(loaded, dict):
            raise CLIError(f"{ENV_PARAMS} must be a JSON object")
        # each source names itself: a bad value in the variable was reported as a --param
        params.update(checked_params(ENV_PARAMS, loaded, error=CLIError))
    given: dict[str, Any] = {}
    for text in getattr(args, "param", None) or ():
        key, value = parse_param(text)
        given[key] = value
    params.update(checked_params("--param", given, error=CLIError))  # NaN, -1: before any run
    return Endpoint(
        model=getattr(args, "model", None) or env.get(ENV_MODEL) or None,
        api_base=getattr(args, "api_base", None) or env.get(ENV_API_BASE) or None,
        api_key=getattr(args, "api_key", None) or env.get(ENV_API_KEY) or None,
        params=params,
    )


def overridden_model(current: Any, endpoint: Endpoint) -> Any:
    """What a holder whose model is `current` (a string, a mapping, a `Model` or None) runs on
    instead: a model string, or a mapping of `LiteLLMModel` arguments."""
    if current is None:
        return None  # it uses the network's default_model, which is overridden itself
    if isinstance(current, str):
        name = endpoint.model or current
        return _endpoint_model(name, endpoint, {}) if endpoint.reconfigures else name
    own = _own_endpoint(current)
    if own is not None:
        return _endpoint_model(endpoint.model or own.pop("model"), endpoint, own)
    if endpoint.model:  # a model with no endpoint of its own (scripted): replaced by name
        return overridden_model(endpoint.model, endpoint)
    return current


def _own_endpoint(current: Any) -> dict[str, Any] | None:
    """The `LiteLLMModel` arguments of a model that has an endpoint, else None."""
    if isinstance(current, Mapping):
        return dict(current) if isinstance(current.get("model"), str) else None
    name = getattr(current, "name", None)
    if not hasattr(current, "api_base") or not isinstance(name, str):
        return None
    own: dict[str, Any] = {"model": name}
    for option in ("api_base", "api_key", "timeout", "max_retries", "stream", "retry_delay"):
        if getattr(current, option, None) is not None:
            own[option] = getattr(current, option)
    own.update(getattr(current, "params", None) or {})
    return own


def _endpoint_model(name: str, endpoint: Endpoint, own: dict[str, Any]) -> dict[str, Any]:
    """`name` on the endpoint, keeping what the agent had (`own`) that the flags do not replace.

    Described as data (the `LiteLLMModel` arguments), which the agents layer resolves:
    `network` never imports the model classes.
    """
    spec: dict[str, Any] = {**own, "model": name}
    if endpoint.api_base:
        spec["api_base"] = endpoint.api_base
    if endpoint.api_key:
        spec["api_key"] = endpoint.api_key
    spec.update(endpoint.params)
    return spec


@contextlib.contextmanager
def endpoint_override(network: Network, endpoint: Endpoint) -> Iterator[Network]:
    """Every agent of `network` (and an LLM router) on `endpoint`, for the duration of the block.

    The network's own objects are switched and switched back, rather than copied: routers
    often hold the agent objects themselves, and a copy would not be the agent they return.
    The definition in the user's file is untouched; only this process's objects change, and
    only while the command runs.
    """
    if not endpoint.active:
        yield network
        return
    holders: list[Any] = [*network.agents.values()]
    if hasattr(network.router, "model"):
        holders.append(network.router)
    saved = [(holder, holder.model) for holder in holders]
    saved_default = network.default_model
    try:
        for holder in holders:
            holder.model = overridden_model(holder.model, endpoint)
        network.default_model = overridden_model(saved_default, endpoint) or (
            overridden_model(endpoint.model, endpoint) if endpoint.model else None
        )
        yield network
    finally:
        for holder, previous in saved:
            holder.model = previous
        network.default_model = saved_default


__all__ = [
    "ENV_API_BASE",
    "ENV_API_KEY",
    "ENV_MODEL",
    "ENV_PARAMS",
    "Endpoint",
    "RedactingWriter",
    "add_endpoint_options",
    "endpoint_from_args",
    "endpoint_override",
    "overridden_model",
    "parse_param",
]
