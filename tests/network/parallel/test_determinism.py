"""Property: the merged state never depends on which branch finished first.

Hypothesis picks the number of branches, what each writes (keys with list, dict, custom and
conflict-resolved replace handlers) and how long each takes; the merged state must equal the
branches' writes applied one after another in declared order.
"""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from network import Network, Parallel, merge_dicts
from tests.network.parallel.helpers import writer_agent


def concat(current: Any, new: Any) -> str:
    """An order-sensitive handler: any reordering shows in the result."""
    return (current or "") + new


SCHEMA: dict[str, Any] = {
    "found": {"type": list[str]},
    "scores": {"type": dict[str, int], "handler": merge_dicts},
    "trail": {"type": str, "handler": concat},
    "winner": {"type": str, "conflict": "last"},
    "opener": {"type": str, "conflict": "first"},
}

branch_writes = st.fixed_dictionaries(
    {},
    optional={
        "found": st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3),
        "scores": st.dictionaries(st.sampled_from(["p", "q"]), st.integers(0, 9), min_size=1),
        "trail": st.sampled_from(["-", "+", "*"]),
        "winner": st.sampled_from(["w1", "w2"]),
        "opener": st.sampled_from(["o1", "o2"]),
    },
)


def expected(writes: list[dict[str, Any]]) -> dict[str, Any]:
    """The branches' writes applied in declared order, by hand."""
    state: dict[str, Any] = {}
    for branch in writes:
        for key, value in branch.items():
            if key == "found":
                state["found"] = state.get("found", []) + value
            elif key == "scores":
                state["scores"] = {**state.get("scores", {}), **value}
            elif key == "trail":
                state["trail"] = state.get("trail", "") + value
            elif key == "winner":
                state["winner"] = value
            elif key == "opener":
                state.setdefault("opener", value)
    return state


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(branch_writes, st.integers(0, 4)),  # what a branch writes, its delay (ms)
        min_size=1,
        max_size=5,
    )
)
def test_the_merged_state_is_the_same_for_every_timing(branches: list[Any]) -> None:
    agents = [
        writer_agent(f"b{i}", writes, delay=ms / 1000) for i, (writes, ms) in enumerate(branches)
    ]

    def router(ctx: Any) -> Any:
        return Parallel(*agents) if ctx.call_count == 0 else None

    network = Network("n", agents=agents, router=router, state_schema=SCHEMA)
    result = anyio.run(network.run, "go")

    assert result.state.snapshot() == expected([writes for writes, _ in branches])
    # each branch: its tool call, then its answer, branch by branch in declared order
    assert [r.agent for r in result.results] == [a.name for a in agents for _ in range(2)]
