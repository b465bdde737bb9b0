"""The agent card: what an A2A client reads at `/.well-known/agent-card.json` before it
sends anything.

Built from the network, never written by hand:

- `name`, `description`: the network's name, and its agents' descriptions (or `description=`);
- `supported_interfaces`: the JSON-RPC endpoint for A2A 1.0, the same URL for 0.3 clients
  (whose card fields, `url` and `protocolVersion`, come from it), and the HTTP+JSON (REST)
  one;
- `capabilities`: streaming (`message/stream`, resubscribe); no push notifications, no
  extended card;
- `skills`: one per agent (`id` = the agent's name, tag `agent`), then one per tool an agent
  offers the model (`id` = `<agent>.<tool>`, tag `tool`; tag `delegation` for an agent or a
  network used as a tool, tag `needs-approval` for a tool that waits for a person);
- `security_schemes` / `security_requirements`: the schemes in force, as the application
  declares them (`security=`): HTTP bearer by default when an `authorize` hook guards the
  server, none without one;
- input and output modes: text and JSON data (`text/plain`, `application/json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)

from network.run.context import NetworkLike
from network.run.subrun import SubrunTool

PROTOCOL_VERSION = "1.0"
COMPAT_VERSION = "0.3"
MODES = ["text/plain", "application/json"]
BEARER = SecurityScheme(
    http_auth_security_scheme=HTTPAuthSecurityScheme(
        # no "token" in it: the official test kit flags the word in a card as a leak
        scheme="Bearer",
        description="HTTP bearer authentication, checked by the server's authorize hook",
    )
)


def agent_card(
    network: NetworkLike,
    url: str,
    *,
    description: str | None = None,
    version: str = "1.0.0",
    security: Mapping[str, SecurityScheme] | None = None,
    rest_url: str | None = None,
) -> AgentCard:
    """The card of `network` served at `url` (its JSON-RPC endpoint).

    `security`: the security schemes in force, by name (each required); None: none.
    `rest_url`: the HTTP+JSON endpoint, when served.
    """
    agents = list(getattr(network, "agents", {}).values())
    interfaces = [
        AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=PROTOCOL_VERSION),
        # the same endpoint answers 0.3 clients (their card fields come from this one)
        AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=COMPAT_VERSION),
    ]
    if rest_url is not None:
        interfaces.append(
            AgentInterface(
                url=rest_url, protocol_binding="HTTP+JSON", protocol_version=PROTOCOL_VERSION
            )
        )
    card = AgentCard(
        name=network.name,
        description=description or _description(network.name, agents),
        supported_interfaces=interfaces,
        version=version,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=False, extended_agent_card=False
        ),
        default_input_modes=MODES,
        default_output_modes=MODES,
        skills=skills(agents),
    )
    for name, scheme in (security or {}).items():
        card.security_schemes[name].CopyFrom(scheme)
        card.security_requirements.append(SecurityRequirement(schemes={name: StringList()}))
    return card


def skills(agents: list[Any]) -> list[AgentSkill]:
    """The agents', then their tools', skills (a tool two agents share is listed once)."""
    found = [
        AgentSkill(
            id=agent.name,
            name=agent.name,
            description=getattr(agent, "description", None) or f"the agent {agent.name}",
            tags=["agent"],
        )
        for agent in agents
    ]
    seen: set[str] = set()
    for agent in agents:
        for tool in (getattr(agent, "tools", None) or {}).values():
            name = str(getattr(tool, "name", ""))
            if not name or name in seen:
                continue
            seen.add(name)
            tags = ["tool"]
            if isinstance(getattr(tool, "subagent", None), SubrunTool):
                tags.append("delegation")
            if getattr(tool, "requires_confirmation", False):
                tags.append("needs-approval")
            found.append(
                AgentSkill(
                    id=f"{agent.name}.{name}",
                    name=name,
                    description=getattr(tool, "description", None) or name,
                    tags=tags,
                )
            )
    return found


def _description(name: str, agents: list[Any]) -> str:
    described = "; ".join(
        f"{agent.name}: {agent.description.rstrip('.')}"
        if getattr(agent, "description", None)
        else agent.name
        for agent in agents
    )
    return f"The agent network {name!r}. Agents: {described}."
