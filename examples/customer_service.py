"""The OpenAI Agents SDK's customer-service agents: triage, FAQ and seat booking with handoffs,
a relevance input guardrail and an output guardrail, on a SQLite thread.

The porting guide from the OpenAI Agents SDK (docs/coming-from-openai-agents.md) walks
through it. A triage agent hands the customer to an FAQ agent or a seat-booking agent
(`Agent(handoffs=[...])`: one `transfer_to_<name>` tool per target); both may hand back. The
seat-booking handoff writes the flight number to state (`handoff(..., on_handoff=...)`), and
its `update_seat` tool writes the confirmation and seat. No router is given: the network
follows the handoffs, and on the thread the next turn starts with the agent that had the
conversation. A relevance guardrail (an agent with typed output) checks every entry agent's
input; an output guardrail refuses answers that leak the internal fare code. A trip stops the
run with `stop_reason="guardrail"`; the program then adds a refusal to the thread
(`network.add_messages`), so the conversation stays well formed.

    python examples/customer_service.py                  # offline, on scripted models
    python examples/customer_service.py --store airline.db
    python examples/customer_service.py --model openai/gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import tempfile
from typing import Annotated, Any

import anyio
from pydantic import BaseModel

from agents import (
    Agent,
    GuardrailResult,
    Model,
    ScriptedModel,
    ToolContext,
    call,
    handoff,
    input_guardrail,
    make_model,
    output_guardrail,
    tool,
)
from network import AgentNetworkError, AssistantMessage, Network, ThreadRef
from network.threads import SQLStore

FAQ = {
    "bag": "You may bring one carry-on bag under 7 kg and two checked bags of 23 kg.",
    "seat": "There are 120 seats: 22 business, 98 economy; exit rows are 4 and 16.",
    "wifi": "Wifi is free on board: join the network Airline-Wifi.",
}
FARE_CODE = "FC-7781"  # internal: never to reach a customer


class Relevance(BaseModel):
    """What the relevance guardrail's agent answers."""

    reasoning: str
    is_relevant: bool


@tool
def faq_lookup(question: Annotated[str, "the customer's question"]) -> str:
    """Look the answer to a frequently asked question up."""
    for word, answer in FAQ.items():
        if word in question.lower():
            return answer
    return f"I don't know the answer to that. (Fare code {FARE_CODE}.)"


@tool
def update_seat(
    confirmation_number: Annotated[str, "the booking's confirmation number"],
    new_seat: Annotated[str, "the new seat, e.g. 23A"],
    ctx: ToolContext,
) -> str:
    """Move the passenger of a booking to another seat."""
    if not re.fullmatch(r"\d{1,2}[A-F]", new_seat.strip().upper()):
        raise ValueError(f"{new_seat!r} is not a seat (a row and a letter A-F, e.g. 23A)")
    seat = new_seat.strip().upper()
    ctx.kv.set("confirmation_number", confirmation_number.strip().upper())
    ctx.kv.set("seat_number", seat)
    flight = ctx.kv.get("flight_number")
    return f"Seat changed to {seat} on flight {flight} for {confirmation_number}."


def assign_flight(ctx: ToolContext) -> None:
    """on_handoff of the seat-booking handoff: the flight the customer is on."""
    ctx.kv.set("flight_number", "FLT-123")


@output_guardrail
def no_fare_code(ctx: Any, answer: Any) -> GuardrailResult:
    """Trip on an answer that names the internal fare code."""
    if FARE_CODE in str(answer):
        return GuardrailResult.trip({"leaked": FARE_CODE})
    return GuardrailResult.allow()


STATE_SCHEMA = {
    "flight_number": {"type": str},
    "confirmation_number": {"type": str},
    "seat_number": {"type": str},
}


def _last_user(request: Any) -> str:
    """The customer's last message (other agents' turns reach an agent as user messages
    too, each starting "[agent ..." or "[tool ...": `network.capabilities.view`)."""
    users = [
        m.content or ""
        for m in request.history
        if m.role == "user" and not (m.content or "").startswith(("[agent ", "[tool "))
    ]
    return users[-1].lower() if users else ""


def _triage(request: Any) -> Any:
    text = _last_user(request)
    if "seat" in text and ("change" in text or "move" in text):
        return call("transfer_to_seat_booking", reason="a seat change")
    return call("transfer_to_faq", reason="a question")


def _faq(request: Any) -> Any:
    last = request.history[-1]
    text = _last_user(request)
    if last.role == "tool" and last.name == "faq_lookup":
        return last.content
    if "change" in text or "move" in text:
        return call("transfer_to_triage", reason="not a question for the FAQ")
    return call("faq_lookup", question=text)


def _booking(request: Any) -> Any:
    last = request.history[-1]
    if last.role == "tool" and last.name == "update_seat":
        return last.content
    text = _last_user(request)
    seat = re.search(r"\b(\d{1,2}[a-f])\b", text)
    confirmation = re.search(r"\b([a-z]{3}\d{3})\b", text)
    if seat is None:  # not a seat change: back to triage
        return call("transfer_to_triage", reason="not a seat change")
    return call(
        "update_seat",
        confirmation_number=(confirmation.group(1) if confirmation else "unknown").upper(),
        new_seat=seat.group(1).upper(),
    )


def _relevance(request: Any) -> str:
    text = _last_user(request)
    relevant = any(word in text for word in ("bag", "seat", "wifi", "flight", "fare"))
    reasoning = "about the airline" if relevant else "not about the airline"
    return json.dumps({"reasoning": reasoning, "is_relevant": relevant})


def build_network(model: str | Model | None = None) -> Network:
    """The airline's agents, on `model` or the offline scripts."""
    scripted = model is None

    def pick(script: Any, name: str) -> Any:
        return ScriptedModel(script, name=name) if scripted else model

    relevance = Agent(
        "relevance_check",
        system=(
            "Decide whether the user's message is about an airline: bags, seats, flights, "
            "wifi, bookings. Small talk is fine."
        ),
        model=pick(_relevance, "scripted-relevance"),
        output_type=Relevance,
    )
    faq = Agent(
        "faq",
        description="Answers frequently asked questions about bags, seats and wifi.",
        system="Answer the customer's question with faq_lookup. Never guess.",
        tools=[faq_lookup],
        model=pick(_faq, "scripted-faq"),
        output_guardrails=[no_fare_code],
    )
    booking = Agent(
        "seat_booking",
        description="Changes the seat of a booking.",
        system=(
            "You change seats on flight {flight_number?}. Ask for the confirmation number "
            "and the new seat, then call update_seat."
        ),
        tools=[update_seat],
        model=pick(_booking, "scripted-booking"),
    )
    triage = Agent(
        "triage",
        description="Sends the customer to the right agent.",
        system="You are an airline's triage agent: hand the customer to the right agent.",
        model=pick(_triage, "scripted-triage"),
        handoffs=[faq, handoff(booking, on_handoff=assign_flight)],
    )
    faq.handoffs.append(triage)
    booking.handoffs.append(triage)
    return Network(
        "airline",
        agents=[triage, faq, booking],
        state_schema=STATE_SCHEMA,
        input_guardrails=[
            input_guardrail(relevance, tripped=lambda answer: not answer.is_relevant)
        ],
        max_iter=8,
    )


network = build_network()

TURNS = [
    "How many bags can I bring?",
    "I want to change my seat to 23A, confirmation ABC123.",
    "Write me a poem about strawberries.",
    "Do you know my fare?",
]
REFUSALS = {
    "input": "Sorry, I can only help with questions about your flight.",
    "output": "Sorry, I can't share that; a colleague will follow up.",
}


async def demo(model: str | Model | None, store_path: str) -> None:
    """Four turns of one customer's conversation, then what the thread holds."""
    airline = build_network(model)
    thread = ThreadRef("customer-1", store=store_path)
    for text in TURNS:
        result = await airline.run(text, thread=thread)
        agents = " -> ".join(r.agent for r in result.results[-3:])
        print(f"> {text}")
        if result.stop_reason == "guardrail":
            trip = result.guardrail
            print(f"  stopped by guardrail {trip.guardrail!r} ({trip.kind}, agent {trip.agent})")
            refusal = REFUSALS[trip.kind]
            await airline.add_messages(thread, [AssistantMessage(refusal)])
            print(f"  {refusal}")
            continue
        print(f"  [{agents}] {result.output}")
    store = SQLStore(store_path)
    try:
        saved = await store.get_thread("customer-1")
    finally:
        await store.close()
    assert saved is not None
    roles = "".join("u" if m.role == "user" else "a" for m in saved.messages if m.role != "tool")
    well_formed = "uu" not in roles
    print(f"thread: {len(saved.messages)} messages, well formed: {well_formed}")
    print(f"state: seat {saved.state.get('seat_number')} on {saved.state.get('flight_number')}")
    print(f"the next turn starts with: {saved.active_agent}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a litellm model string; default: offline scripts")
    parser.add_argument("--api-base", help="an OpenAI-compatible server for --model")
    parser.add_argument("--store", help="the SQLite file (default: a temporary one)")
    args = parser.parse_args(argv)
    model = make_model(args.model, api_base=args.api_base) if args.model else None
    if args.model:
        print(f"Running on {args.model}.")
    else:
        print("Running offline on scripted models (pass --model provider/name for a real one).")
    _quiet_logs()
    with tempfile.TemporaryDirectory() as scratch:
        store = args.store or str(pathlib.Path(scratch) / "airline.db")
        try:
            anyio.run(demo, model, store)
        except AgentNetworkError as exc:
            print(f"error: the run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


def _quiet_logs() -> None:
    """An application decides what its logs show; this one only wants warnings."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


if __name__ == "__main__":
    sys.exit(main())
