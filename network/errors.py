"""The library's error hierarchy.

Every error names what it is about (the agent, tool, key or field), so a caller can tell what
went wrong without reading a traceback. An error raised inside a run carries the partial
`RunResult` in `partial_result`, so nothing that already happened is lost.
"""

from __future__ import annotations

import contextlib
from typing import Any


class AgentNetworkError(Exception):
    """Base class of every error this library raises."""

    #: The run's result up to the failure, when the error was raised inside a run.
    partial_result: Any = None


class ConfigurationError(AgentNetworkError):
    """A network, agent, tool, router or schema was defined wrongly."""


class RoutingError(AgentNetworkError):
    """A router chose an agent the network does not have, or returned something unusable."""

    def __init__(self, message: str, *, agent: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent


class ToolError(AgentNetworkError):
    """A tool call failed: unknown tool, invalid arguments or a handler that raised."""

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool


class Retry(AgentNetworkError):
    """Raised by a tool to ask the model to try again: `raise Retry("use an ISO date")`.

    The model reads the message as the call's error result and may call again with better
    arguments. Each tool may do so `@tool(model_retries=N)` times per run (default 2); past
    that budget the model is told the tool gives up (error type "RetryBudgetExceeded"), and
    `max_iter` bounds what it does next. The attempt's state writes are dropped.
    """

    def __init__(self, message: str) -> None:
        # the text now, once: a `__str__` that raises was the run's crash where the model's
        # error result was made (`Retry(obj)`); now the model reads that it could not be read
        text = message if isinstance(message, str) else _text_of(message)
        super().__init__(text)
        self.message = text


def _text_of(value: object) -> str:
    """`str(value)`, or a placeholder naming its type when its `__str__` raises."""
    try:
        return str(value)
    except Exception:
        return f"<the text of {type(value).__name__} could not be read: its __str__ raised>"


class ModelError(AgentNetworkError):
    """The model provider failed; the provider's own exception is the `__cause__`.

    Attributes:
        model: the model's name.
        status_code: the HTTP status of the answer, None when there was none.
        attempts: every attempt of the request as usage limits and traces record it
            (`network.history.results.ModelCall`, each with its `error`), the last one the
            failure raised; empty when the model did not report its attempts.
        counted_as_request: whether a shared budget counts the failed request as a request
            made (no tokens, no cost) rather than giving its reservation back: a request the
            server answered that the run may go past (a server refusing a typed answer's
            `response_format`, asked again in tool mode). False for a failure in general.
    """

    counted_as_request: bool = False

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        status_code: int | None = None,
        attempts: tuple[Any, ...] = (),
    ) -> None:
        super().__init__(message)
        self.model = model
        self.status_code = status_code
        self.attempts = attempts


class OutputValidationError(AgentNetworkError):
    """An agent's final answer did not match its `output_type`, re-asks included.

    Attributes:
        agent: the agent's name.
        attempts: how many answers were tried (the first one plus the re-asks).
        errors: every attempt's validation errors, one list per attempt, in order.
        raw: the last answer's raw text.
    """

    def __init__(
        self, message: str, *, agent: str, attempts: int, errors: list[list[str]], raw: str
    ) -> None:
        super().__init__(message)
        self.agent = agent
        self.attempts = attempts
        self.errors = errors
        self.raw = raw


class MaxStepsExceeded(AgentNetworkError):
    """An agent's tool loop reached its step cap without answering: a parallel branch's
    `Parallel(max_steps=...)`, or a network branch's own `max_iter` (`network.run.fork`).

    Attributes:
        agent: the agent's (or the network's) name.
        branch: the branch's id (`"<fan-out name>/<key>"`).
        max_steps: the cap that was reached.
    """

    def __init__(self, message: str, *, agent: str, branch: str, max_steps: int) -> None:
        super().__init__(message)
        self.agent = agent
        self.branch = branch
        self.max_steps = max_steps


class RunStopped(AgentNetworkError):
    """A capability ended the run where it stands (`network.run.capability`): the agent call
    under way commits nothing, and the run returns with `stop_reason` (its `RunResult`, not
    this exception, is what the caller sees).

    Attributes:
        stop_reason: the run's stop reason ("guardrail", "usage_limit", ...).
        summary: a line saying why, for the result's `summary`, or None.
        event: `(name, value)` of a CUSTOM event sent as the stopped call's step closes (the
            capability's own report of the stop), or None.
    """

    stop_reason = "stopped"

    def __init__(
        self,
        message: str = "",
        *,
        summary: str | None = None,
        event: tuple[str, dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.summary = summary
        self.event = event


class GuardrailTripped(RunStopped):
    """A guardrail's tripwire fired: the run stopped with `stop_reason="guardrail"`.

    It is not raised out of `network.run`: the run returns normally and its `RunResult`
    carries it as `guardrail`. Nothing of the call it stopped was committed (see
    docs/guardrails.md).

    Attributes:
        guardrail: the guardrail's name.
        kind: "input", "output", "tool_input" or "tool_output".
        agent: the agent whose call it checked.
        tool: the tool, for a tool guardrail (else None).
        info: what the guardrail said about it (`GuardrailResult.info`: its output).
        result: the whole `GuardrailResult`.
    """

    stop_reason = "guardrail"

    def __init__(
        self,
        message: str,
        *,
        guardrail: str,
        kind: str,
        agent: str | None,
        tool: str | None = None,
        info: Any = None,
        result: Any = None,
    ) -> None:
        super().__init__(message)
        self.guardrail = guardrail
        self.kind = kind
        self.agent = agent
        self.tool = tool
        self.info = info
        self.result = result


class BudgetExceeded(AgentNetworkError):
    """A shared budget (`network.SharedBudget`) refused a model request before it was sent:
    what it asked for does not fit in what is left (see docs/budgets.md).

    Raised out of the agent call whose request it was, so out of `network.run` (with
    `partial_result`); inside a sub-run, the caller's model reads it as the tool's error.

    Attributes:
        budget: the budget's key (`"tenant:acme"`, `"thread:app/t1"`, ...).
        limit: the cap that refused it: `max_tokens`, `max_cost_usd`, `max_requests` or
            `requests_per_minute`; or the ledger's own ceiling (`ledger_tokens`, 2**61
            tokens, or `ledger_cost_usd`, 1e300 USD, a key's spent and held together),
            which refuses an absurd request (an infinite price) whatever the caps.
        value: the cap's value.
        spent: what the budget had spent, in the cap's unit.
        held: what requests under way held (reserved, not settled yet).
        asked: what this request asked to reserve.
        retry_after: seconds until the per-minute window opens again (`requests_per_minute`
            only, else None).
    """

    def __init__(
        self,
        message: str,
        *,
        budget: str,
        limit: str,
        value: float,
        spent: float,
        held: float,
        asked: float,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.budget = budget
        self.limit = limit
        self.value = value
        self.spent = spent
        self.held = held
        self.asked = asked
        self.retry_after = retry_after


class StateError(AgentNetworkError):
    """A state operation was refused (unknown key in a closed schema, bad scope, ...)."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class StateValidationError(StateError):
    """A value did not match its key's declared type; the state was left unchanged."""

    def __init__(self, message: str, *, key: str, expected: str) -> None:
        super().__init__(message, key=key)
        self.expected = expected


class UnstorableValueError(StateValidationError):
    """A value that cannot become JSON (a lock, a client, a set, NaN...) was written to state.

    State is streamed, persisted and copied, so it holds data only; live objects travel beside
    it (`deps=` / `resources=` on `network.run`). `found` names the offending type.
    """

    def __init__(self, message: str, *, key: str, found: str) -> None:
        super().__init__(message, key=key, expected="a JSON value")
        self.found = found


class StateConflictError(StateError):
    """Two parallel branches wrote one state key whose handler replaces, and the key does not
    say how to resolve that (`{"conflict": "first" | "last" | fn}` in the schema).

    Nothing of the fan-out was merged. `writers` are the two writes' `Writer`s (provenance:
    agent, tool, branch), in declared branch order.
    """

    def __init__(self, message: str, *, key: str, writers: tuple[Any, ...]) -> None:
        super().__init__(message, key=key)
        self.writers = writers


class TemplateError(ConfigurationError):
    """A `{key}` placeholder in an agent's instructions has no value in state."""

    def __init__(self, message: str, *, key: str, agent: str | None) -> None:
        super().__init__(message)
        self.key = key
        self.agent = agent


class MessageError(AgentNetworkError, ValueError):
    """A message handed to the library (`network.add_messages`) was refused; nothing was
    written. `index` is its position in the list given (None: the list itself), `field` the
    field at fault (`role`, `content`, ...)."""

    def __init__(self, message: str, *, index: int | None, field: str) -> None:
        super().__init__(message)
        self.index = index
        self.field = field


class StaleThreadError(AgentNetworkError):
    """Another run committed to the thread after this run loaded it (optimistic locking)."""

    def __init__(self, message: str, *, thread_id: str, expected: int, found: int) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.expected = expected
        self.found = found


class ThreadError(AgentNetworkError):
    """A thread store operation was refused (duplicate thread id, missing thread, ...)."""


class _NamesField(AgentNetworkError):
    """An error about one field of what a store was given: `field` names it."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class _DatabaseFailed(AgentNetworkError):
    """The database behind a store failed in `operation`. The message is generic on purpose
    (a driver's text quotes SQL and values); the driver's exception is the `__cause__`, and
    the store logs it."""

    def __init__(self, message: str, *, operation: str) -> None:
        super().__init__(message)
        self.operation = operation


class InvalidIdError(_NamesField, ThreadError, ValueError):
    """A thread id, user id or app name that no store may keep (empty, too long, or holding a
    character a database cannot store); `field` names which. Raised before any store is
    touched, with the same rules for every store."""


class ThreadStoreError(_DatabaseFailed, ThreadError):
    """The database behind a thread store failed. The message is generic on purpose (a
    driver's text quotes SQL and values); the driver's exception is the `__cause__`, and the
    store logs it."""


class LeaseLostError(ThreadError):
    """A served run lost its thread's run lease (it expired while the process was paused or
    cut off from the store, and another run may have taken the thread), so it was stopped
    before doing anything more: no further model or tool call, no further commit.

    Attributes:
        thread_id: the thread.
        run_id: the run that was stopped.
    """

    def __init__(self, message: str, *, thread_id: str, run_id: str | None) -> None:
        super().__init__(message)
        self.thread_id = thread_id
        self.run_id = run_id


class MemoryStoreError(AgentNetworkError):
    """A long-term memory operation failed (`network.memory`): the base of the three below."""


class InvalidMemoryError(_NamesField, MemoryStoreError, ValueError):
    """A memory store refused what it was given (a namespace, key, value, metadata, filter,
    query, ttl or limit); `field` names which. Nothing was written."""


class MemoryDatabaseError(_DatabaseFailed, MemoryStoreError):
    """The database behind a memory store failed. The message is generic on purpose (a
    driver's text quotes SQL and values); the driver's exception is the `__cause__`, and the
    store logs it."""


class EmbeddingError(MemoryStoreError):
    """An embedder failed or answered with something unusable (a wrong count or size of
    vectors, NaN or infinity); the provider's exception, if any, is the `__cause__`."""


class AgentNetworkWarning(UserWarning):
    """Base class of the warnings this library emits (filter them with `warnings`)."""


class ToolStateWarning(AgentNetworkWarning):
    """A tool tried to put a value in state that state cannot hold (see `UnstorableValueError`).

    The model is told through the tool's error result and the tool's writes are rolled back;
    this warning is how the developer hears about it, since the bug is in the tool's code, not
    in anything the model did. It names the agent, the tool and the key.
    """


class ParallelWriteWarning(AgentNetworkWarning):
    """Agents a router runs in parallel declare writes to one key that would conflict.

    `GraphRouter` warns when the network is built: two agents of one fan-out name the same
    key in `output_key` or a tool's `outputs_to_state`, and the key's handler replaces with
    no `conflict` rule, so a run where both write it fails with `StateConflictError`.
    """


class UnpricedModelWarning(AgentNetworkWarning):
    """A run capped by `UsageLimits(max_cost_usd=...)` got an answer from a model with no
    known price, so the cap does not count that request (see `network.run.limits`).

    It names the model. Give the model a price (`price=Price(...)` on `OpenAIModel` and
    `LiteLLMModel`, `Price.FREE` for a server that costs nothing) to have it counted; to
    stop such a run instead, turn the warning into an error:
    `warnings.simplefilter("error", UnpricedModelWarning)`.
    """


def attach_partial_result(error: BaseException, result: Any) -> None:
    """Make `result` reachable from `error` as `error.partial_result`.

    Errors of other libraries (a router's own ValueError, say) get the attribute too, so the
    caller's `except` clauses keep matching the original type. A result already there is
    replaced: the caller of each run reads that run's result. It was left by a run the error
    passed through first (a run inside this one: its own caller read it) or by an earlier run
    that raised the same instance (a module-level exception), never by this run.
    """
    try:
        error.partial_result = result  # type: ignore[attr-defined]
    except AttributeError:  # a type that refuses new attributes; add a note instead
        # one refusing `__notes__` too (a frozen dataclass) is left as it was raised: the
        # error itself is what the caller must get
        with contextlib.suppress(AttributeError):
            error.add_note(f"partial result: {result!r}")
