"""A `RunAgentInput` (camelCase JSON) to what the run is asked for: messages, state, answers.

Everything a request asks for is checked here, against the thread's record, before anything
runs: the body's shape and ids, the messages (roles, tool results), the declared tools, the
pending interrupts, the client's state writes (scope). The serving layer then bounds and
validates the state and settles the answers (`network.serving.admission`). A `RequestError`
leaves the thread exactly as it was.

The run's state is the server's own state for the thread, plus the client's writes; when the
request rejects a proposal, the keys it proposed are restored from the server's checkpoint.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunAgentInput
from pydantic import ValidationError

from network.agui.client_state import client_writes
from network.agui.confirmation import answers_for
from network.agui.declared_tools import CONTEXT_KEY, context_text, declared_tools
from network.agui.lone_surrogates import lone_surrogate_error
from network.agui.messages import convert
from network.agui.tool_results import check_tool_results
from network.run.definition import RunnableNetwork
from network.run.interrupts import restore_rejected
from network.serving.admission import RunRequest
from network.serving.client_writes import check_scopes
from network.serving.errors import RequestError
from network.serving.limits import check_run_id, check_thread_id
from network.serving.registry import ThreadRecord


def parse(body: bytes) -> Any:
    """The request body as an `ag_ui.core.RunAgentInput`, or a 422 `RequestError`."""
    try:
        run_input = RunAgentInput.model_validate_json(body)
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            named = lone_surrogate_error(body)  # the field, where the parser says a column
            if named is not None:
                raise named from exc
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in exc.errors(include_url=False)[:5]
        )
        raise RequestError(422, "invalid_request", f"not a RunAgentInput: {problems}") from exc
    # The thread stores' rules, so an id the server takes is one any store can keep: the run
    # id is written with every commit of the run, so one a store refuses (a NUL on
    # PostgreSQL) would fail them all after the model was paid for.
    check_thread_id(run_input.thread_id, "threadId")
    check_run_id(run_input.run_id, "runId")
    return run_input


def check_request(
    network: RunnableNetwork,
    record: ThreadRecord,
    run_input: Any,
    *,
    system_messages: str = "refuse",
    messages: list[Any] | None = None,
) -> RunRequest:
    """Every AG-UI check of a request on `record`'s thread: what the run is asked for, or
    the `RequestError` refusing it. `messages`: the request's, converted already
    (`first_messages`)."""
    if messages is None:
        messages = convert(run_input.messages, system_messages)
    check_tool_results(record, messages)
    client_tools = declared_tools(network, run_input)
    answered = answers_for(network, record.thread_id, record.interrupts, run_input.resume)
    writes = client_writes(run_input.state, record.client_view())
    check_scopes(writes)
    data = {**record.state, **writes}
    restore_rejected(data, answered)
    context = context_text(network, run_input)
    return RunRequest(
        messages=messages,
        data=data,
        answered=answered,
        temp={CONTEXT_KEY: context} if context is not None else {},
        client_input=run_input,  # context, forwardedProps, tools: for user code
        client_tools=tuple(client_tools),
    )


def first_messages(run_input: Any, system_messages: str = "refuse") -> list[Any] | None:
    """The request's messages as the network's, converted before admission so that a new
    thread on a store is created holding them by its lease's claim
    (`ServedThreads.admit(messages=)`); None for a request that answers interrupts (a new
    thread has none) or whose messages are refused: `check_request` refuses them after
    admission, which answers 404 and 409 first, as before."""
    if run_input.resume:
        return None
    try:
        return convert(run_input.messages, system_messages)
    except RequestError:
        return None


__all__ = ["RequestError", "check_request", "first_messages", "parse"]
