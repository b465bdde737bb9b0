"""The porting guides' programs (docs/coming-from-*.md) run offline, on their scripted models,
as a user runs them: a subprocess each, asserting what they print and what they leave in their
SQLite thread store. (AgentKit's guide uses examples/codegen.py: see tests/test_examples.py.)"""

from __future__ import annotations

import json
import pathlib
import re

import anyio
import pytest

from network.threads import SQLStore
from tests.test_examples import run_example


@pytest.mark.heavy
def test_supervisor_approval_persists_asks_once_and_forks(tmp_path: pathlib.Path) -> None:
    store = tmp_path / "threads.db"
    done = run_example("supervisor_approval.py", "--store", str(store), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "offline" in out.splitlines()[0]
    assert "Agents called: researcher -> writer -> publisher\nStop reason: interrupted" in out
    assert "Waiting for approval: publish('SQLite threads')" in out
    assert "After approval: router_done | published: Threads now persist" in out
    assert "A second approval was refused: AlreadyAnsweredError" in out
    assert "Publish tool ran: 1 time(s)\n" in out  # approved once, run once
    assert "Checkpoints: 0:researcher, 1:writer, 2:publisher" in out
    assert "Forked release-1 at checkpoint 0 as release-1-kids" in out
    assert "Fork draft: Your chats are now saved in one safe file" in out
    assert "Fork after rejection: router_done | published: None" in out
    assert "Publish tool ran: 1 time(s) in all" in out  # the rejected one never ran
    assert "Original draft still: Threads now persist" in out

    async def stored() -> None:
        async with SQLStore(str(store)) as threads:
            original = await threads.get_thread("release-1")
            fork = await threads.get_thread("release-1-kids")
            assert original is not None and fork is not None
            assert original.full_state()["published"]["title"] == "SQLite threads"
            assert original.pending_interrupts == []  # answered, and only once
            assert fork.full_state()["audience"] == "children"
            assert "published" not in fork.full_state()
            origin = await threads.origin("release-1-kids")
            assert origin is not None
            assert (origin.parent_thread_id, origin.checkpoint) == ("release-1", 0)

    anyio.run(stored)


@pytest.mark.heavy
def test_weather_state_agui_shares_user_and_app_keys_across_threads(
    tmp_path: pathlib.Path,
) -> None:
    store = tmp_path / "weather.db"
    done = run_example("weather_state_agui.py", "--store", str(store), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "offline" in out.splitlines()[0]
    assert re.search(r"Serving AG-UI on http://127\.0\.0\.1:\d+/", out)
    turns = re.findall(
        r"^\[(\w+) / ([\w-]+)\] (.*)\n    state: (\{.*\}) last_city=(.*)$", out, re.M
    )
    assert [(who, thread) for who, thread, *_ in turns] == [
        ("alice", "alice-morning"),
        ("alice", "alice-morning"),
        ("alice", "alice-evening"),
        ("bob", "bob-1"),
    ]
    states = [json.loads(state) for *_, state, _ in turns]
    assert [s["user:temperature_unit"] for s in states] == [
        "Fahrenheit",
        "Fahrenheit",
        "Fahrenheit",  # the preference followed alice to her second conversation
        None,  # bob has his own user: keys
    ]
    assert [s["app:weather_requests"] for s in states] == [None, 1, 2, 3]  # everyone's
    assert "London: sunny, 59 degrees Fahrenheit" in turns[1][2]
    assert "Paris: sunny, 64 degrees Fahrenheit" in turns[2][2]
    assert "Tokyo: sunny, 22 degrees Celsius" in turns[3][2]
    started = json.loads(out.split("alice-evening started from: ", 1)[1].splitlines()[0])
    assert started == {"app:weather_requests": 1, "user:temperature_unit": "Fahrenheit"}
    assert "temp:reading reached a client: False" in out

    async def stored() -> None:
        async with SQLStore(str(store)) as threads:
            alice = await threads.list_threads(app_name="weather-app", user_id="alice")
            bob = await threads.list_threads(app_name="weather-app", user_id="bob")
            assert sorted(t.thread_id for t in alice) == ["alice-evening", "alice-morning"]
            assert [t.thread_id for t in bob] == ["bob-1"]
            evening = await threads.get_thread("alice-evening")
            assert evening is not None
            assert evening.user_state == {"user:temperature_unit": "Fahrenheit"}
            assert evening.app_state == {"app:weather_requests": 3}
            assert evening.state["last_city"] == "Paris"  # the thread's own key
            assert "temp:reading" not in evening.full_state()  # never stored

    anyio.run(stored)


def test_research_state_reads_inputs_from_state_and_merges_outputs(
    tmp_path: pathlib.Path,
) -> None:
    done = run_example("research_state.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "offline" in out.splitlines()[0]
    assert "The model sees search_docs parameters: ['query']" in out  # repository is hidden
    assert "Agents called: researcher -> researcher -> writer" in out
    assert "Documents: 3 | typed: True" in out  # two searches' hits, appended (merge_lists)
    assert "Visited: ['docs/agui.md', 'docs/threads.md', 'docs/time-travel.md']" in out
    assert "Answer: From 3 documents" in out
    assert "Stop reason: router_finished" in out


def test_research_state_searches_the_repository_state_names(tmp_path: pathlib.Path) -> None:
    done = run_example("research_state.py", "--repository", "elsewhere", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Documents: 0 | typed: True" in done.stdout  # same queries, the other repository
    assert "Visited: []" in done.stdout


@pytest.mark.heavy
def test_customer_service_hands_off_guards_and_keeps_the_thread_well_formed(
    tmp_path: pathlib.Path,
) -> None:
    """The OpenAI Agents SDK's customer-service agents: handoffs followed with no router, the
    seat handoff's on_handoff write, a relevance input guardrail (an agent with typed output)
    and an output guardrail, each trip answered with add_messages."""
    store = tmp_path / "airline.db"
    done = run_example("customer_service.py", "--store", str(store), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "offline" in out.splitlines()[0]
    assert "[triage -> faq -> faq] You may bring one carry-on bag" in out
    # the FAQ agent had the conversation, handed it back to triage, which sent it on
    assert "[triage -> seat_booking -> seat_booking] Seat changed to 23A on flight FLT-123" in out
    assert "stopped by guardrail 'relevance_check' (input, agent seat_booking)" in out
    assert "stopped by guardrail 'no_fare_code' (output, agent faq)" in out
    assert "FC-7781" not in out  # the leaked fare code never reaches the customer
    assert "well formed: True" in out
    assert "the next turn starts with: faq" in out

    async def stored() -> None:
        async with SQLStore(str(store)) as threads:
            thread = await threads.get_thread("customer-1")
            assert thread is not None
            assert thread.state["seat_number"] == "23A"
            assert thread.state["flight_number"] == "FLT-123"  # written by on_handoff
            spoken = [m for m in thread.messages if m.role in ("user", "assistant")]
            users = [m.content for m in spoken if m.role == "user"]
            assert users[2] == "Write me a poem about strawberries."
            poem = next(i for i, m in enumerate(spoken) if m.content == users[2])
            assert spoken[poem + 1].role == "assistant"  # the refusal, not another question
            # the tool's answer stays (an earlier call of the run); no answer to the customer has it
            assert all("FC-7781" not in (m.content or "") for m in spoken if m.role == "assistant")

    anyio.run(stored)
