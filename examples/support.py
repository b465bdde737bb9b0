"""A customer-support team routed by an LLM: `routing_agent` picks who answers next.

A billing agent looks invoices up with a tool, a technical agent answers product questions,
and the routing agent chooses between them (or finishes) after every call. Offline, a scripted
router model reads the conversation summary it is sent and decides; pass `--model` to route
and answer with a real model.

    python examples/support.py "I was charged twice on invoice INV-42"
    python examples/support.py --model openai/gpt-4o-mini "My app crashes on start"
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import AgentNetworkError, Network
from routers import routing_agent

INVOICES = {"INV-42": {"amount": 120.0, "charges": 2, "status": "paid"}}


@tool
def lookup_invoice(invoice_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Look an invoice up by its id (INV-...)."""
    invoice = INVOICES.get(invoice_id.upper())
    if invoice is None:
        raise ValueError(f"no invoice {invoice_id!r}")
    ctx.kv.set("invoices_checked", [invoice_id.upper()])
    return invoice


def _conversation(request: Any) -> str:
    return "".join(message.content or "" for message in request.system)


def _router_script(request: Any) -> Any:
    """Offline routing: billing questions to billing, the rest to tech, then finish."""
    summary = _conversation(request).split("## Conversation so far", 1)[-1]
    if "billing:" in summary and "refund" in summary.lower():
        return call("done", summary="Billing issued a refund for the duplicate charge.")
    if "tech:" in summary:
        return call("done", summary="Tech support answered.")
    if "invoice" in summary.lower() or "charged" in summary.lower():
        return call("select_agent", name="billing", reason="a billing question")
    return call("select_agent", name="tech", reason="a product question")


def _billing_script(request: Any) -> Any:
    history = request.history
    if history and history[-1].role == "tool":
        return "You were charged twice for INV-42; I have refunded the duplicate charge."
    return call("lookup_invoice", invoice_id="INV-42")


def build_network(model: str | None = None) -> Network:
    """The support network, on `model` or offline scripts."""
    billing = Agent(
        "billing",
        description="Answers questions about invoices, charges and refunds.",
        system="You handle billing. Look invoices up before answering.",
        tools=[lookup_invoice],
        model=model or ScriptedModel(_billing_script, name="scripted-billing"),
    )
    tech = Agent(
        "tech",
        description="Answers technical questions about the product.",
        system="You are technical support. Be brief and concrete.",
        model=model or ScriptedModel(lambda r: "Reinstall the app, then sign in again."),
    )
    router = routing_agent(model or ScriptedModel(_router_script, name="scripted-router"))
    return Network("support", agents=[billing, tech], router=router, max_iter=6)


network = build_network()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a litellm model string; default: offline script")
    parser.add_argument("question", nargs="?", default="I was charged twice on invoice INV-42")
    args = parser.parse_args(argv)
    if args.model:
        print(f"Running on {args.model}.")
    else:
        print("Running offline on a scripted model (pass --model provider/name for a real one).")
    _quiet_logs()
    try:
        result = build_network(args.model).run_sync(args.question)
    except AgentNetworkError as exc:  # the model could not be reached, or refused the request
        print(f"error: the run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print("Agents called:", " -> ".join(r.agent for r in result.results) or "none")
    print("Answer:", result.output)
    print("Router summary:", result.summary)
    print("Stop reason:", result.stop_reason)
    return 0


def _quiet_logs() -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


if __name__ == "__main__":
    sys.exit(main())
