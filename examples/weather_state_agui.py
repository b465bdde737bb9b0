"""ADK's weather-bot state tutorial, served over AG-UI: `user:` and `app:` keys across threads.

The porting guide from Google ADK (docs/coming-from-adk.md) walks through it. One agent
answers weather questions with two tools. Its instructions are filled from state
(`{user:temperature_unit?}`, ADK's `{key?}`); `set_temperature_unit` writes the user's
preference to `user:temperature_unit` (shared by every thread of that user), `get_weather`
counts requests in `app:weather_requests` (shared by everyone, summed by a merge handler)
and keeps its raw reading in `temp:reading` (this run only, never stored); the answer lands
in `last_weather_report` (`output_key`, the thread's own key).

The demo serves the network with `network.agui.app` on a SQLite thread store, on a real
uvicorn server on 127.0.0.1, with an `authorize` hook that maps bearer tokens to users, and
talks to it over HTTP as an AG-UI client would: Alice sets Fahrenheit in one conversation,
asks in it, then asks in a second conversation (the preference follows her); Bob asks in his
own (Celsius); the `app:` counter counts all three.

    python examples/weather_state_agui.py                    # offline demo, scripted model
    python examples/weather_state_agui.py --serve --port 8000 --store weather.db
    agent-network serve examples/weather_state_agui.py:network --store weather.db
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import socket
import sys
import tempfile
import threading
import time
from typing import Annotated, Any, Literal

import httpx
import jsonpatch  # type: ignore[import-untyped]

from agents import Agent, Model, ScriptedModel, ToolContext, call, make_model, tool
from network import Network, RunContext
from network.agui import Unauthorized, app

READINGS_C = {"london": 15, "paris": 18, "tokyo": 22, "new york": 25}
TOKENS = {"token-alice": "alice", "token-bob": "bob"}  # stands in for your session check

Unit = Literal["Celsius", "Fahrenheit"]


def add_counts(current: int | None, new: int) -> int:
    """Merge handler of a counter: a write adds to it (re-applied by the store per commit)."""
    return (current or 0) + new


STATE_SCHEMA = {
    "user:temperature_unit": {"type": Unit},
    "app:weather_requests": {"type": int, "handler": add_counts},
    "temp:reading": {"type": float},
    "last_city": {"type": str},
    "last_weather_report": {"type": str},
}


@tool
def set_temperature_unit(
    unit: Annotated[Unit, "the unit the user prefers"], ctx: ToolContext
) -> str:
    """Remember the temperature unit the user prefers."""
    ctx.kv.set("user:temperature_unit", unit)
    return f"From now on temperatures are in {unit}."


@tool
def get_weather(city: Annotated[str, "the city, e.g. London"], ctx: ToolContext) -> str:
    """The current weather in a city, in the user's preferred unit."""
    celsius = READINGS_C.get(city.strip().lower())
    if celsius is None:
        raise ValueError(f"no weather station in {city!r}")
    unit = ctx.kv.get("user:temperature_unit") or "Celsius"
    reading = celsius * 9 / 5 + 32 if unit == "Fahrenheit" else float(celsius)
    ctx.kv.set("temp:reading", reading)  # this run only: never stored, never streamed
    ctx.kv.set("app:weather_requests", 1)  # adds one (add_counts)
    ctx.kv.set("last_city", city.strip().title())
    return f"{city.strip().title()}: sunny, {reading:.0f} degrees {unit}."


def _scripted(request: Any) -> Any:
    """Offline: pick the tool from the user's words; answer from the tool's result."""
    last = request.history[-1]
    if last.role == "tool":
        return f"The weather report: {last.content}"
    text = (last.content or "").lower()
    if "fahrenheit" in text or "celsius" in text:
        return call(
            "set_temperature_unit", unit="Fahrenheit" if "fahrenheit" in text else "Celsius"
        )
    city = re.search(r"weather in ([a-z ]+)", text)
    if city:
        return call("get_weather", city=city.group(1).strip())
    return "Ask me about the weather in a city."


def route(ctx: RunContext) -> Any:
    """ADK's runner: the agent goes on until it answers in text (it reads its tools' results)."""
    last = ctx.last_result
    if last is None or last.tool_calls:
        return ctx.network.agents["weather"]
    return None


def build_network(model: str | Model | None = None) -> Network:
    """The weather bot, on `model` or the offline script."""
    weather = Agent(
        "weather",
        description="Answers weather questions in the user's preferred unit.",
        system=(
            "You are a weather bot. Use get_weather for weather questions and "
            "set_temperature_unit when the user names a unit. The user prefers "
            "{user:temperature_unit?}. Your last report in this conversation: "
            "{last_weather_report?}"
        ),
        tools=[set_temperature_unit, get_weather],
        model=model or ScriptedModel(_scripted, name="scripted-weather"),
        output_key="last_weather_report",
    )
    return Network(
        "weather-app", agents=[weather], router=route, state_schema=STATE_SCHEMA, max_iter=4
    )


network = build_network()  # `agent-network serve examples/weather_state_agui.py:network`


def authorize(request: Any, thread_id: str | None) -> str:
    """The caller's user id from its bearer token; the thread belongs to that user."""
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    user = TOKENS.get(token)
    if user is None:
        raise Unauthorized("sign in first")
    return user


def create_app(store: str, model: str | Model | None = None) -> Any:
    """The AG-UI app: the weather bot on a thread store, one user per bearer token."""
    return app(build_network(model), store=store, authorize=authorize)


class Conversation:
    """A minimal AG-UI client: posts RunAgentInput, reads the SSE stream, applies state."""

    def __init__(self, base_url: str, token: str, thread_id: str) -> None:
        self.http = httpx.Client(
            base_url=base_url, headers={"authorization": f"Bearer {token}"}, timeout=120
        )
        self.thread_id = thread_id
        self.state: dict[str, Any] = {}
        self.started_with: dict[str, Any] = {}  # the state the last run started from
        self.turn = 0

    def say(self, text: str) -> str:
        self.turn += 1
        run_id = f"{self.thread_id}-run-{self.turn}"
        body = {
            "threadId": self.thread_id,
            "runId": run_id,
            "state": self.state,
            "messages": [{"id": f"{run_id}-user", "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }
        reply = self.http.post("/", json=body, headers={"accept": "text/event-stream"})
        reply.raise_for_status()
        answer = ""
        for frame in reply.text.split("\n\n"):
            if not frame.startswith("data: "):
                continue
            event = json.loads(frame[len("data: ") :])
            if event["type"] == "STATE_SNAPSHOT":
                self.state = event["snapshot"]
                self.started_with = self.started_with if answer else dict(self.state)
            elif event["type"] == "STATE_DELTA":
                self.state = jsonpatch.apply_patch(self.state, event["delta"])
            elif event["type"] == "TEXT_MESSAGE_CONTENT":
                answer += event["delta"]
            elif event["type"] == "RUN_ERROR":
                raise RuntimeError(f"the run failed: {event['message']}")
        return answer


def serve_in_background(asgi: Any) -> tuple[str, Any]:
    """A uvicorn server on a free port of 127.0.0.1, in a thread; (base URL, server)."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", lifespan="on"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the AG-UI server did not start")
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def show(who: str, thread: str, answer: str, state: dict[str, Any]) -> None:
    keys = {k: state.get(k) for k in ("user:temperature_unit", "app:weather_requests")}
    print(f"[{who} / {thread}] {answer}")
    print(f"    state: {json.dumps(keys)} last_city={state.get('last_city')!r}")


def demo(store: str, model: str | Model | None) -> None:
    base_url, server = serve_in_background(create_app(store, model))
    print(f"Serving AG-UI on {base_url}/ with threads in {pathlib.Path(store).name}")
    try:
        morning = Conversation(base_url, "token-alice", "alice-morning")
        show("alice", "alice-morning", morning.say("Please use Fahrenheit."), morning.state)
        show("alice", "alice-morning", morning.say("What is the weather in London?"), morning.state)
        evening = Conversation(base_url, "token-alice", "alice-evening")
        show("alice", "alice-evening", evening.say("And the weather in Paris?"), evening.state)
        print(f"    alice-evening started from: {json.dumps(evening.started_with, sort_keys=True)}")
        bob = Conversation(base_url, "token-bob", "bob-1")
        show("bob", "bob-1", bob.say("What is the weather in Tokyo?"), bob.state)
        leaked = any("temp:reading" in c.state for c in (morning, evening, bob))
        print("temp:reading reached a client:", leaked)
    finally:
        server.should_exit = True


def model_parameter(text: str) -> tuple[str, Any]:
    """`--param KEY=VALUE`: a model parameter, its value read as JSON when it is JSON."""
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a litellm model string; default: offline script")
    parser.add_argument("--api-base", help="an OpenAI-compatible server for --model")
    parser.add_argument(
        "--param",
        type=model_parameter,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a model parameter, e.g. max_tokens=128 or seed=1 (with --model)",
    )
    parser.add_argument("--store", help="the SQLite thread store (default: a temporary file)")
    parser.add_argument("--serve", action="store_true", help="only serve, until interrupted")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    model = (
        make_model(args.model, api_base=args.api_base, **dict(args.param)) if args.model else None
    )
    if args.model:
        print(f"Running on {args.model}.")
    else:
        print("Running offline on a scripted model (pass --model provider/name for a real one).")
    _quiet_logs()
    with tempfile.TemporaryDirectory() as scratch:
        store = args.store or str(pathlib.Path(scratch) / "weather.db")
        if args.serve:
            import uvicorn

            uvicorn.run(create_app(store, model), host="127.0.0.1", port=args.port)
            return 0
        demo(store, model)
    return 0


def _quiet_logs() -> None:
    """An application decides what its logs show; this one only wants warnings."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


if __name__ == "__main__":
    sys.exit(main())
