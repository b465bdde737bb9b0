"""`ContextPolicy`: what an agent's request may hold, so a long thread still fits the model.

A thread keeps every message for as long as it lives; a model's context window does not. A
policy on the agent (or the network's default, `Network(context_policy=...)`) bounds each
request by messages and by tokens, keeping the agent's instructions and the newest turns:

- The newest messages are kept, walking back from the end until the next one would break a
  bound. A tool result is never sent without the assistant message that called it (providers
  answer 400 to an orphan tool message), so a cut that would fall between them moves forward.
  The newest turn is always sent, even alone over the budget.
- `summarize` (an `Agent`, typically on a cheaper model, or a function `(messages, previous)`
  returning the text, sync or async) replaces what falls out with a summary. The summary is a
  record of the thread (`network.history.summary.Summary`: who wrote it, in which run, which
  messages it covers), committed with the next agent call and reused by later runs. To make
  reuse last, a new summary covers enough that the newest turns take `summary_target` of the
  budget; later runs send it again until what follows no longer fits, and only then extend it
  (the old summary plus the turns after it), so the same turns are never summarised twice.
- Tool results longer than `max_tool_result_chars` are sent cut, with a note that the whole
  value is in the thread's history.

Compaction changes what is sent, never what is stored: the thread and `state.results` keep
every message, and each result's `history` is still the whole conversation prefix. A call
that was compacted emits an AG-UI CUSTOM event "ContextCompacted" (what was dropped, summarised
and trimmed) and logs `context.compacted`.

The cost of applying a policy grows with what is sent, not with the thread: only the kept
messages are counted (each once, see `agents.models._tokens`).
"""

from __future__ import annotations

import inspect
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from agents.models._tokens import counter_of, tokens_of
from network.errors import ConfigurationError
from network.history.messages import AssistantMessage, SystemMessage, ToolMessage
from network.history.results import ModelCall, Usage
from network.history.summary import Summary
from network.numbers import check_number
from network.run.agent_call import AgentCall
from network.run.capability import Capability
from network.run.context import RunContext
from network.run.events import ContextCompacted

SUMMARY_PREFIX = "Summary of the earlier conversation"


@dataclass(frozen=True, slots=True)
class ContextPolicy(Capability):
    """Bounds on what one request sends; see the module docstring.

    A capability (`network.run.capability`): at the request stage it sets what the request
    sends (`AgentCall.sent_prompt` / `sent_history`); an agent's own replaces its network's
    (`Network(context_policy=...)`, the default of agents that set none).

    Args:
        max_messages: the most conversation messages sent (a summary counts as one).
        max_tokens: the most tokens sent, instructions and summary included.
        keep_system: always send the agent's instructions; False drops them when they alone
            leave no room for the newest turn.
        summarize: an `Agent` or a function `(messages, previous_summary_or_None) -> str`
            (sync or async) that summarises what falls out; None drops it.
        max_tool_result_chars: tool results longer than this are sent cut, with a note.
        summary_target: the share of each bound the newest turns may take right after a new
            summary (0 < target <= 1); lower means rarer, larger summaries.
    """

    max_messages: int | None = None
    max_tokens: int | None = None
    keep_system: bool = True
    summarize: Any = None
    max_tool_result_chars: int | None = None
    summary_target: float = 0.5

    agent_overrides_network: ClassVar[bool] = True

    async def request(self, call: AgentCall) -> None:
        """Bound what this call's request sends; what is recorded stays whole."""
        system = call.prompt if call.sent_prompt is None else call.sent_prompt
        history = call.history if call.sent_history is None else call.sent_history
        run, name = call.run, call.agent.name
        done = await apply_policy(self, run, name, call.model, list(system), history)
        if done.changed:
            await _report(run, name, len(history), done)
        call.sent_prompt, call.sent_history = done.system, done.history

    def __post_init__(self) -> None:
        for name in ("max_messages", "max_tokens", "max_tool_result_chars"):
            check_number(
                f"ContextPolicy.{name}", getattr(self, name), integer=True, minimum=1, optional=True
            )
        check_number("ContextPolicy.summary_target", self.summary_target, above=True, maximum=1)
        summarize = self.summarize
        if summarize is not None and not (callable(summarize) or _is_agent(summarize)):
            raise ConfigurationError(
                f"ContextPolicy.summarize must be an Agent or a function, got {summarize!r}"
            )


@dataclass(slots=True)
class Compacted:
    """What a policy made of one request."""

    system: list[Any]
    history: Sequence[Any]
    dropped: int = 0  # conversation messages not sent (summarised or dropped)
    summary: Summary | None = None
    new_summary: bool = False
    trimmed: int = 0  # tool results sent cut
    tokens: int = 0  # tokens counted for what is sent (0 when no token bound)

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.trimmed)


async def apply_policy(
    policy: ContextPolicy,
    ctx: RunContext,
    agent_name: str,
    model: Any,
    system: list[Any],
    history: Sequence[Any],
) -> Compacted:
    """The system messages and conversation to send under `policy`."""
    counter = await counter_of(model) if policy.max_tokens is not None else None
    limit = policy.max_tool_result_chars
    n = len(history)

    def cost(message: Any) -> int:
        return 0 if counter is None else tokens_of(_sent_form(message, limit), counter)

    system_tokens = sum(cost(m) for m in system)
    budget = None if policy.max_tokens is None else policy.max_tokens - system_tokens
    if budget is not None and budget <= 0 and not policy.keep_system:
        system, budget = [], policy.max_tokens
    state = ctx.state
    previous = _summary_in_force(policy, state.summaries, n)
    floor = 0
    summary_message = None
    tail_budget, tail_messages = budget, policy.max_messages
    if previous is not None:
        floor = previous.covers
        summary_message = _summary_message(previous)
        tail_budget = None if budget is None else budget - cost(summary_message)
        tail_messages = None if tail_messages is None else max(tail_messages - 1, 1)
    cut = _cut(history, floor, tail_budget, tail_messages, cost)
    result = Compacted(system, history)
    summary = previous
    if policy.summarize is not None and cut > floor:
        # What follows the last summary no longer fits: extend it, leaving room to grow.
        target = policy.summary_target
        cut = _cut(
            history,
            floor,
            None if tail_budget is None else int(tail_budget * target),
            None if tail_messages is None else max(int(tail_messages * target), 1),
            cost,
        )
        make = partial(_new_summary, policy, ctx, agent_name, history, floor, cut, previous)
        summary = await _summarize(policy, ctx, agent_name, make)
        state.summaries.append(summary)
        summary_message = _summary_message(summary)
        result.new_summary = True
    elif policy.summarize is None:
        summary_message = None
    sent = list(history[cut:]) if cut else history
    sent, result.trimmed = _with_results_cut(sent, limit)
    if summary_message is not None and cut:
        result.system = [*system, summary_message]
        result.summary = summary
    result.history = sent
    result.dropped = cut
    if counter is not None:
        result.tokens = sum(cost(m) for m in result.system) + sum(cost(m) for m in sent)
    return result


def _summary_in_force(
    policy: ContextPolicy, summaries: Sequence[Summary], n: int
) -> Summary | None:
    """The latest summary, when the policy summarizes and it covers no more than the `n`
    messages of this request's conversation."""
    previous = summaries[-1] if policy.summarize is not None and summaries else None
    if previous is not None and previous.covers > n:
        return None  # a summary of a longer conversation than this request's
    return previous


def _with_results_cut(sent: Sequence[Any], limit: int | None) -> tuple[Sequence[Any], int]:
    """`sent` with tool results cut to `limit` characters, and how many were cut."""
    if limit is None:
        return sent, 0
    trimmed = [_sent_form(m, limit) for m in sent]
    return trimmed, sum(1 for a, b in zip(trimmed, sent, strict=True) if a is not b)


def _cut(
    history: Sequence[Any],
    floor: int,
    budget: int | None,
    max_messages: int | None,
    cost: Callable[[Any], int],
) -> int:
    """Where the sent part of `history[floor:]` starts: the newest messages within the bounds,
    never starting with a tool result, never empty."""
    n = len(history)
    if budget is None and max_messages is None:
        return floor
    cut, used = n, 0
    while cut > floor:
        if max_messages is not None and n - cut >= max_messages:
            break
        size = cost(history[cut - 1])
        if budget is not None and used + size > budget:
            break
        used += size
        cut -= 1
    while cut < n and isinstance(history[cut], ToolMessage):
        cut += 1  # its assistant message fell out: the result must go too
    if cut == n and n > floor:  # nothing fits: send the newest turn anyway
        cut = n - 1
        while cut > floor and isinstance(history[cut], ToolMessage):
            cut -= 1
    return cut


async def _summarize(
    policy: ContextPolicy,
    ctx: RunContext,
    agent_name: str,
    make: Callable[[], Awaitable[Summary]],
) -> Summary:
    """The summary `make()` makes (`_new_summary`, its arguments bound).

    In a durable run the summary is a recorded step (`ctx.engine.steps.summary`): a replayed run
    gets the summary it made before, and the summariser's model is not called again.
    """
    steps = ctx.engine.steps
    if steps is None:
        return await make()
    reported = len(ctx.engine.subagent_calls)
    summary: Summary = await steps.summary(agent_name, make)
    if _is_agent(policy.summarize) and len(ctx.engine.subagent_calls) == reported:
        _count_replayed(ctx, summary)
    return summary


def _count_replayed(ctx: RunContext, summary: Summary) -> None:
    """A replayed summary's spending, counted again from its record: live, the summarising
    agent's run counts against the run that started it (`network.run.budgets.caller`), so a
    resumed run's usage is the uninterrupted run's."""
    usage = summary.usage
    if not (usage.prompt_tokens or usage.completion_tokens or usage.total_tokens):
        return
    ctx.add_usage(usage)
    ctx.engine.subagent_calls = (
        *ctx.engine.subagent_calls,
        ModelCall(summary.by, usage=usage, agent=summary.by),
    )


async def _new_summary(
    policy: ContextPolicy,
    ctx: RunContext,
    agent_name: str,
    history: Sequence[Any],
    start: int,
    stop: int,
    previous: Summary | None,
) -> Summary:
    """A summary of `history[:stop]`: the previous summary plus `history[start:stop]`."""
    summarizer = policy.summarize
    messages = list(history[start:stop])
    earlier = previous.text if previous is not None else None
    usage = Usage()
    if _is_agent(summarizer):
        by = summarizer.name
        outcome = await summarizer.run(summary_request(messages, earlier))
        text, usage = outcome.output, outcome.usage
    else:
        by = getattr(summarizer, "__name__", type(summarizer).__name__)
        text = summarizer(messages, earlier)
        if inspect.isawaitable(text):
            text = await text
    if not isinstance(text, str) or not text.strip():
        raise ConfigurationError(f"summariser {by!r} returned no summary text, got {text!r}")
    return Summary(text, stop, by, agent_name, ctx.run_id, time.time(), start, usage)


def summary_request(messages: Sequence[Any], previous: str | None) -> str:
    """The text a summarising agent is asked to summarise."""
    lines = [
        "Summarise the conversation below for an assistant that will continue it: keep "
        "facts, decisions, names, numbers and open questions; answer with the summary only."
    ]
    if previous:
        lines += ["", "Summary so far:", previous]
    lines += ["", "Conversation:"]
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
            text = message.content or ""
            lines.append(f"assistant: {text}{' [called ' + calls + ']' if calls else ''}")
        elif isinstance(message, ToolMessage):
            lines.append(f"tool {message.name or ''}: {message.content}")
        else:
            lines.append(
                f"{getattr(message, 'role', 'message')}: {getattr(message, 'content', '')}"
            )
    return "\n".join(lines)


_summary_messages: dict[int, tuple[weakref.ref[Any], SystemMessage]] = {}
_trimmed: dict[tuple[int, int], tuple[weakref.ref[Any], ToolMessage]] = {}


def _summary_message(summary: Summary) -> SystemMessage:
    """The message a summary is sent as (one per summary, so its wire form is made once)."""
    entry = _summary_messages.get(id(summary))
    if entry is not None and entry[0]() is summary:
        return entry[1]
    message = SystemMessage(f"{SUMMARY_PREFIX} ({summary.covers} messages):\n{summary.text}")
    key = id(summary)
    _summary_messages[key] = (
        weakref.ref(summary, lambda _r: _summary_messages.pop(key, None)),
        message,
    )
    return message


def _sent_form(message: Any, limit: int | None) -> Any:
    """`message` as sent: a tool result over `limit` characters cut, with a note (one copy per
    message and limit, so its wire form and token count are made once)."""
    if limit is None or not isinstance(message, ToolMessage) or len(message.content) <= limit:
        return message
    key = (id(message), limit)
    entry = _trimmed.get(key)
    if entry is not None and entry[0]() is message:
        return entry[1]
    note = (
        f"\n[trimmed: {limit} of {len(message.content)} characters sent; the full result of "
        f"tool call {message.tool_call_id} is in the thread's history]"
    )
    cut = ToolMessage(message.tool_call_id, message.content[:limit] + note, message.name)
    cut.is_error = message.is_error
    _trimmed[key] = (weakref.ref(message, lambda _r: _trimmed.pop(key, None)), cut)
    return cut


def _is_agent(value: Any) -> bool:
    return (
        hasattr(value, "run")
        and isinstance(getattr(value, "name", None), str)
        and hasattr(value, "tools")
    )


async def _report(ctx: RunContext, agent_name: str, messages: int, done: Compacted) -> None:
    """A request `apply_policy` changed (`done`, of a history of `messages`), reported: a
    CUSTOM "ContextCompacted" event and a log line."""
    value = {
        "agent": agent_name,
        "messages": messages,
        "sent": len(done.history),
        "dropped": done.dropped,
        "summarized": done.summary is not None,
        "summaryCovers": done.summary.covers if done.summary is not None else 0,
        "newSummary": done.new_summary,
        "summarizedBy": done.summary.by if done.summary is not None else None,
        "trimmedToolResults": done.trimmed,
        "tokens": done.tokens,
    }
    import structlog  # noqa: PLC0415 (structlog: kept out of `import agents`)

    structlog.get_logger("agents.context").info("context.compacted", run_id=ctx.run_id, **value)
    emitter = ctx.engine.emitter
    if emitter.active:
        await emitter.emit(ContextCompacted(value))
