"""Our runs scored by pydantic-evals (the `evals` extra): its datasets, its evaluators.

    from pydantic_evals.evaluators import HasMatchingSpan, MaxToolCalls
    theirs = to_pydantic_evals(dataset, evaluators=[MaxToolCalls(max_calls=4)])
    report = await theirs.evaluate(network_task(network))

`network_task(network)` is a pydantic-evals task: it runs the network on a case's input and
returns the run's output (the typed output's JSON form when the last agent has one).
`to_pydantic_evals(dataset)` makes our dataset theirs: each case's input, expected output and
metadata, and its `expected_tools` as their `TrajectoryMatch` evaluator on that case.

Their span-based evaluators (`HasMatchingSpan`, `ToolCorrectness`, `TrajectoryMatch`,
`ArgumentCorrectness`, `MaxToolCalls`, `MaxModelRequests`) read the OpenTelemetry GenAI spans a
run makes (`execute_tool {tool}` with `gen_ai.tool.name`, `chat` with `gen_ai.request.model`:
`network.telemetry`), so they score our runs unchanged once an OpenTelemetry SDK tracer
provider is installed (`opentelemetry.trace.set_tracer_provider`), as pydantic-evals asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from network.errors import ConfigurationError
from network.evals.cases import Dataset
from network.evals.runner import check_network
from network.network import Network

if TYPE_CHECKING:
    import pydantic_evals

__all__ = ["network_task", "to_pydantic_evals"]

_OURS = Dataset  # `to_pydantic_evals` names pydantic-evals' own `Dataset` inside


def network_task(
    network: Network[Any], *, state: Mapping[str, Any] | None = None
) -> Callable[[str], Awaitable[Any]]:
    """A pydantic-evals task running `network` on the case's input (with `state`, if any)."""
    check_network("network_task", network)  # else each case's error (an agent has no `limits`)

    async def run_network(inputs: str) -> Any:
        result = await network.run(inputs, state=state)
        calls = list(result.state.results)
        value = calls[-1].output_value if calls else None
        if value is None:
            return result.output
        dump = getattr(value, "model_dump", None)
        return dump(mode="json") if callable(dump) else value

    run_network.__name__ = f"run_{network.name}"
    return run_network


def to_pydantic_evals(
    dataset: Dataset, evaluators: Sequence[Any] = ()
) -> pydantic_evals.Dataset[Any, Any, Any]:
    """`dataset` as a pydantic-evals `Dataset`, with `evaluators` for every case (see the
    module docstring)."""
    if not isinstance(dataset, _OURS):  # else an AttributeError ('list' has no 'cases')
        raise ConfigurationError(
            f"to_pydantic_evals: dataset must be a Dataset, got {type(dataset).__name__}"
        )
    from pydantic_evals import Case, Dataset  # noqa: PLC0415 (the evals extra)
    from pydantic_evals.evaluators import TrajectoryMatch  # noqa: PLC0415

    cases = []
    for case in dataset.cases:
        own = []
        if case.expected_tools is not None:
            names = [tool.name for tool in case.expected_tools]
            own.append(TrajectoryMatch(expected_trajectory=names, order="in_order"))
        cases.append(
            Case(
                name=case.name,
                inputs=case.input,
                expected_output=case.expected_output,
                metadata=dict(case.metadata) or None,
                evaluators=tuple(own),
            )
        )
    return Dataset(name=dataset.name, cases=cases, evaluators=list(evaluators))
