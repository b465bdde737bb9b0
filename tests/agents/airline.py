"""A small airline team for the handoff tests: triage hands off to an FAQ agent and a seat
booking agent; both may hand the conversation back to triage (appended after, as the OpenAI
Agents SDK's customer-service example does). Scripts are given per test."""

from __future__ import annotations

from typing import Any

from agents import Agent, ScriptedModel, ToolContext, handoff
from network import Network


def remember_flight(ctx: ToolContext) -> None:
    """`on_handoff` of the booking handoff: the flight the booking agent works on."""
    ctx.kv.set("flight", "FLT-123")


def team(
    triage_script: Any = (),
    faq_script: Any = (),
    booking_script: Any = (),
    *,
    router: Any = None,
    on_booking: Any = remember_flight,
    input_filter: Any = None,
    schema: Any = None,
    triage_tools: Any = (),
    booking_tools: Any = (),
) -> tuple[Network, Agent, Agent, Agent]:
    """The network and its three agents (scripted models; `router=None`: handoffs lead)."""
    faq = Agent(
        "FAQ Agent",
        description="Answers questions about bags, seats and wifi.",
        system="You answer airline questions.",
        model=ScriptedModel(faq_script, name="faq-model"),
    )
    booking = Agent(
        "seat_booking",
        description="Changes the seat of a passenger.",
        system="You change seats. The flight is {flight?}.",
        model=ScriptedModel(booking_script, name="booking-model"),
        tools=booking_tools,
    )
    triage = Agent(
        "triage",
        description="Sends the customer to the right agent.",
        system="You triage.",
        model=ScriptedModel(triage_script, name="triage-model"),
        tools=triage_tools,
        handoffs=[
            faq,
            handoff(
                booking,
                description="Change a seat.",
                on_handoff=on_booking,
                input_filter=input_filter,
            ),
        ],
    )
    faq.handoffs.append(triage)
    booking.handoffs.append(triage)
    network = Network("airline", agents=[triage, faq, booking], router=router, state_schema=schema)
    return network, triage, faq, booking


network = team()[0]  # what `agent-network graph tests/agents/airline.py:network` draws
