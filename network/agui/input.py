"""A `RunAgentInput` (camelCase JSON) to a prepared run: context, state and answers.

Everything a request asks for is checked here, before anything runs: the body's shape, the
messages (roles, tool results), the declared tools, the pending interrupts, the client's state
writes (scope, schema and size). A `RequestError` leaves the thread exactly as it was.

The run's state is the server's own state for the thread, plus the client's writes; when the
request rejects a proposal, the keys it proposed are restored from the server's checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ag_ui.core import RunAgentInput
from pydantic import ValidationError

from network.agui.client_state import build_state, check_scopes, client_writes
from network.agui.confirmation import answers_for
from network.agui.declared_tools import CONTEXT_KEY, context_text, declared_tools
from network.agui.errors import RequestError
from network.agui.messages import convert, input_text
from network.agui.registry import ThreadRecord, json_size
from network.agui.tool_results import check_tool_results
from network.continuing import RunnableNetwork
from network.errors import InvalidIdError
from network.run.context import RunContext
from network.run.interrupts import Answer, Interrupt, restore_rejected
from network.threads.ids import check_id


def parse(body: bytes) -> Any:
    """The request body as an `ag_ui.core.RunAgentInput`, or a 422 `RequestError`."""
    try:
        run_input = RunAgentInput.model_validate_json(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in exc.errors(include_url=False)[:5]
        )
        raise RequestError(422, "invalid_request", f"not a RunAgentInput: {problems}") from exc
    # The thread stores' rules, so an id the server takes is one any store can keep: the run
    # id is written with every commit of the run, so one a store refuses (a NUL on
    # PostgreSQL) would fail them all after the model was paid for.
    for field, value, code in (
        ("threadId", run_input.thread_id, "invalid_thread_id"),
        ("runId", run_input.run_id, "invalid_run_id"),
    ):
        try:
            check_id(field, value)
        except InvalidIdError as exc:
            raise RequestError(422, code, str(exc), key=field) from exc
    return run_input


@dataclass(slots=True)
class CheckedRequest:
    """What a request asks for, checked: nothing has been applied yet."""

    messages: list[Any]  # the client's conversation, as the network's messages
    client_tools: list[Any]
    answered: list[tuple[Interrupt, Answer]]
    data: dict[str, Any]  # the state the run starts from (no `temp:context`)
    context: str | None  # the client's context, for `temp:context`
    state: Any  # a fresh State of `data` plus the context, validated by the schema


def check_request(
    network: RunnableNetwork,
    record: ThreadRecord,
    run_input: Any,
    *,
    system_messages: str = "refuse",
    max_state_bytes: int | None = None,
) -> CheckedRequest:
    """Every check of a request on `record`'s thread, or the `RequestError` refusing it."""
    messages = convert(run_input.messages, system_messages)
    check_tool_results(record, messages)
    client_tools = declared_tools(network, run_input)
    answered = answers_for(network, record.thread_id, record.interrupts, run_input.resume)
    writes = client_writes(run_input.state, record.client_view())
    check_scopes(writes)
    data = {**record.state, **writes}
    restore_rejected(data, answered)
    if max_state_bytes is not None:
        size = json_size(data)
        if size > max_state_bytes:
            raise RequestError(
                413,
                "state_too_large",
                f"thread {record.thread_id!r}: its state would take {size} bytes, more than "
                f"the limit of {max_state_bytes} bytes",
            )
    context = context_text(network, run_input)
    seeded = dict(data)
    if context is not None:
        seeded[CONTEXT_KEY] = context
    state = build_state(network, seeded)  # every value through the schema: a 422 names the key
    return CheckedRequest(messages, list(client_tools), answered, data, context, state)


def prepare(
    network: RunnableNetwork,
    record: ThreadRecord,
    run_input: Any,
    *,
    system_messages: str = "refuse",
    max_state_bytes: int | None = None,
) -> RunContext:
    """The context of the run `run_input` asks for on `record`'s thread (in memory)."""
    checked = check_request(
        network,
        record,
        run_input,
        system_messages=system_messages,
        max_state_bytes=max_state_bytes,
    )
    state = checked.state
    state.append_messages(checked.messages)
    return RunContext(
        network=network,
        state=state,
        input=input_text(checked.messages),
        run_id=run_input.run_id,
        thread_id=run_input.thread_id,
        resume=checked.answered,
        client_input=run_input,  # context, forwardedProps, tools: for user code
        client_tools=tuple(checked.client_tools),
        known_active_agent=record.active_agent,
    )


__all__ = ["CheckedRequest", "RequestError", "check_request", "parse", "prepare"]
