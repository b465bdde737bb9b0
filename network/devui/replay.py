"""A stored thread as the page replays it: its agent calls with their state deltas.

A thread store keeps every agent call (`InferenceResult`) with the RFC 6902 operations it
applied to state, so a thread replays from an empty state, step by step: the page applies the
deltas itself, only up to the step it shows. Runs are told apart by the conversation (a call's
history holds one more user message per run). `history` answers `history_of(key)` for a
stored thread: which agent call wrote the key, how, and when (a store does not keep which tool
of the call did it).
"""

from __future__ import annotations

from typing import Any

from network.devui.conversation import conversation, last_run
from network.devui.steps import key_of, step_view
from network.history.results import InferenceResult
from network.history.view import HistoryView
from network.threads.thread_data import Thread, ThreadInfo

MAX_REPLAY_STEPS = 5_000  # agent calls sent for one thread (the oldest first)


def thread_header(info: ThreadInfo) -> dict[str, Any]:
    """What the thread list shows of a thread."""
    return {
        "thread_id": info.thread_id,
        "app_name": info.app_name,
        "user_id": info.user_id,
        "revision": info.revision,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "message_count": info.message_count,
        "result_count": info.result_count,
    }


def run_numbers(thread: Thread, results: list[InferenceResult]) -> list[int]:
    """Which run (1, 2, ...) each call belonged to: how many user messages its history holds.

    Every run adds its user message to the conversation before its first call, and a call's
    history is a prefix of the conversation, so the count only grows, by one per run.
    """
    users_before = [0]  # users_before[n]: user messages among the first n of the conversation
    for message in thread.messages:
        users_before.append(users_before[-1] + (getattr(message, "role", None) == "user"))
    numbers = []
    for result in results:
        history = result.history
        if isinstance(history, HistoryView) and len(history) < len(users_before):
            numbers.append(users_before[len(history)])
        else:  # a history of its own (a custom agent's): counted directly
            numbers.append(sum(getattr(m, "role", None) == "user" for m in history))
    return numbers


def thread_replay(thread: Thread) -> dict[str, Any]:
    """The thread's header, its first `MAX_REPLAY_STEPS` agent calls, each with its delta and
    the number of the run it belonged to, its conversation and its last run."""
    results = thread.results[:MAX_REPLAY_STEPS]
    runs = run_numbers(thread, results)
    steps = []
    for index, (result, run) in enumerate(zip(results, runs, strict=True)):
        view = step_view(result, index)
        view["state_delta"] = result.state_delta
        view["run"] = run
        steps.append(view)
    return {
        **thread_header(thread),
        "steps": steps,
        "truncated": len(thread.results) > MAX_REPLAY_STEPS,
        **conversation(thread),
        "last_run": last_run(thread, runs),
    }


def history(thread: Thread, key: str) -> list[dict[str, Any]]:
    """Every stored write to `key`, oldest first: step, agent, operation, path and time."""
    found = []
    for index, result in enumerate(thread.results):
        for op in result.state_delta:
            path = op.get("path", "")
            if isinstance(path, str) and key_of(path) == key:
                found.append(
                    {
                        "step": index,
                        "agent": result.agent,
                        "op": op.get("op"),
                        "path": path,
                        "at": result.started_at,
                    }
                )
    return found
