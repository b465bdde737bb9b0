"""The run's token usage as AG-UI 1.0 reports it on RUN_FINISHED: one entry per provider and model.

The run is the accounting boundary: its own agent calls, its routing agent's requests and its
guardrails' (`network.run.guardrails`) and its sub-runs' (agents and networks used as
tools, `network.run.subrun`), not the calls an earlier run on the same thread made
(a resumed run reports only what it spent itself). When the run recorded its model requests
(`RunContext.engine.record_model_calls`: a traced run, a run with usage limits, a run the AG-UI
server serves), each request's counts go to the entry of its provider and model; otherwise one entry
without provider or model holds the run's totals. A run that spent nothing reports no entry.

AG-UI counts cached tokens as part of the input: `cachedInputTokens` is a part of
`inputTokens`, never added to it, as `Usage.cached_tokens` already is of `prompt_tokens`.
"""

from __future__ import annotations

from typing import Any

from network.history.results import MAX_TOKEN_COUNT, Usage
from network.run.context import RunContext


def run_token_usage(ctx: RunContext) -> list[dict[str, Any]]:
    """The `usage` entries of RUN_FINISHED for the run `ctx` (snake_case keys, see above)."""
    results = ctx.state.results
    own = results[len(results) - ctx.call_count :] if ctx.call_count else []
    calls = [call for result in own for call in result.model_calls]
    calls.extend(ctx.engine.router_calls)
    guardrails = ctx.engine.guardrails  # its guardrails' requests, and the answers a trip discarded
    if guardrails is not None:
        calls.extend(call for check in guardrails.checks for call in check.model_calls)
        calls.extend(guardrails.discarded)
    calls.extend(ctx.engine.subagent_calls)  # its sub-runs' (agents and networks used as tools)
    by_model: dict[tuple[str | None, str | None], Usage] = {}
    recorded = Usage()
    for call in calls:
        key = (call.provider, call.response_model or call.model)
        by_model[key] = by_model.get(key, Usage()) + call.usage
        recorded = recorded + call.usage
    total = ctx.usage
    if recorded.total_tokens < total.total_tokens or not by_model:
        # Some calls were not recorded (or none was): what they spent goes unattributed.
        rest = Usage(
            total.prompt_tokens - recorded.prompt_tokens,
            total.completion_tokens - recorded.completion_tokens,
            total.total_tokens - recorded.total_tokens,
            total.estimated,
            max(0, total.cached_tokens - recorded.cached_tokens),
        )
        if rest.total_tokens > 0 or rest.prompt_tokens > 0 or rest.completion_tokens > 0:
            by_model[(None, None)] = by_model.get((None, None), Usage()) + rest
    return [_entry(provider, model, usage) for (provider, model), usage in by_model.items()]


def _entry(provider: str | None, model: str | None, usage: Usage) -> dict[str, Any]:
    prompt, completion = _count(usage.prompt_tokens), _count(usage.completion_tokens)
    entry: dict[str, Any] = {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": _count(prompt + completion),
    }
    if usage.cached_tokens:
        entry["cached_input_tokens"] = min(_count(usage.cached_tokens), prompt)
    if provider:
        entry["provider"] = provider
    if model:
        entry["model"] = model
    return entry


def _count(tokens: int) -> int:
    """A count AG-UI can carry: from 0 to `MAX_TOKEN_COUNT` (its schema's ceiling). The HTTP
    clients already keep a server's counts in range; a model of one's own may report anything
    (10**30 failed the run at RUN_FINISHED, after its answer was in)."""
    return min(max(tokens, 0), MAX_TOKEN_COUNT)
