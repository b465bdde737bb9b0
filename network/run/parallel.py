"""`Parallel`: what a router returns to run several agents side by side.

    def router(ctx):
        if ctx.call_count == 0:
            return Parallel(researcher, critic, max_concurrency=4)
        ...

Each branch runs its agent until it answers: one call, and as long as the answer asks for
tools, another call that reads their results (the tool loop `agent.run` runs), at most
`max_steps` calls (default 10; a branch still asking for tools then fails with
`MaxStepsExceeded`). A branch may also be a `Network`: its router runs its agents on the
branch, on the run's state, until it finishes or reaches its own `max_iter`.

Branches run concurrently in one anyio task group; each sees the state and the conversation as
they were at the fork, continues on its own copy of them (its own tool calls and results,
never a sibling's) and writes to its own copy of the store. At the join their writes merge
into the run's state in the declared branch order (never the order they finished in), through
each key's handler, so the outcome never depends on timing (`network.run.join`). Their results
join the history in declared order, branch by branch, each naming its branch
(`InferenceResult.branch`).

`Parallel.map(agent, items, input=...)` runs one agent (or network) over many inputs
(LangGraph's `Send`): branch `i` gets `input(items[i])` (default `str(item)`) as its own user
message and as its `ctx.input`; `ctx.branch.item` is the item itself.

`on_error="fail"` (the default): a failing branch cancels the others, nothing of the fan-out
is merged, and the run fails with that branch's error. `on_error="continue"`: the branches
that succeeded merge; each failed one leaves a result with its `error` and is listed in
`RunResult.failed_branches`. On a thread those results are committed, so when a later run's
router returns the same fan-out (same `name`), only the failed branches run again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from network.errors import ConfigurationError, MessageError
from network.numbers import check_number
from network.run.inputs import text_problem

__all__ = ["Branch", "BranchFailure", "Parallel"]

ON_ERROR = ("fail", "continue")
DEFAULT_MAX_STEPS = 10  # a branch's calls when its agent keeps asking for tools (`agent.run`'s)


@dataclass(frozen=True, slots=True)
class Branch:
    """One branch of a fan-out, as the branch's `RunContext.branch` shows it.

    Attributes:
        id: `"<fan-out name>/<key>"`, stable across runs (it names the branch in history,
            provenance and events).
        agent: the agent (or agent name, before the network resolved it), or a network.
        index: the branch's position in declared order.
        input: the branch's own input (`Parallel.map`), else None.
        item: the mapped item (`Parallel.map`), else None.
    """

    id: str
    agent: Any
    index: int
    input: str | None = None
    item: Any = None


@dataclass(frozen=True, slots=True)
class BranchFailure:
    """A branch that failed under `on_error="continue"`.

    Attributes:
        branch: the branch's id.
        agent: the agent's name.
        error_type: the exception's type name.
        message: the exception's message.
        error: the exception itself (None once read back from a thread).
    """

    branch: str
    agent: str
    error_type: str
    message: str
    error: BaseException | None = None


class Parallel:
    """Branches to run side by side, then join (see module docstring).

    Args:
        *agents: the agents (or agent names, or networks), one branch each, in declared
            order.
        max_concurrency: at most this many branches run at once (default: all).
        max_steps: the most calls one branch's agent makes (it runs until it answers
            without asking for tools); a branch that reaches it still asking fails with
            `MaxStepsExceeded`. A network branch is capped by its own `max_iter` instead.
        on_error: "fail" (a failure cancels every branch, nothing merges, the run fails) or
            "continue" (the others merge; failures are listed on the result).
        name: the fan-out's name, prefix of its branch ids (default: the agents' names
            joined with "+"). Keep it stable: a resumed run finds its branches by it.
    """

    __slots__ = ("branches", "max_concurrency", "max_steps", "name", "on_error")

    def __init__(
        self,
        *agents: Any,
        max_concurrency: int | None = None,
        on_error: str = "fail",
        name: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        if not agents:
            raise ConfigurationError("Parallel needs at least one agent")
        names = [_agent_name(agent) for agent in agents]
        fork = name if name is not None else "+".join(names)
        self._setup(fork, max_concurrency, on_error, max_steps)
        keys = _unique_keys(names)
        self.branches: tuple[Branch, ...] = tuple(
            Branch(f"{fork}/{key}", agent, index)
            for index, (agent, key) in enumerate(zip(agents, keys, strict=True))
        )

    def _setup(self, name: str, max_concurrency: int | None, on_error: str, max_steps: int) -> None:
        if not isinstance(name, str) or not name or "/" in name:
            raise ConfigurationError(
                f"Parallel: name must be a non-empty string without '/', got {name!r}"
            )
        if on_error not in ON_ERROR:
            raise ConfigurationError(
                f"Parallel {name!r}: on_error must be 'fail' or 'continue', got {on_error!r}"
            )
        check_number(
            f"Parallel {name!r}: max_concurrency",
            max_concurrency,
            integer=True,
            minimum=1,
            optional=True,
        )
        check_number(f"Parallel {name!r}: max_steps", max_steps, integer=True, minimum=1)
        self.name = name
        self.on_error = on_error
        self.max_concurrency = max_concurrency
        self.max_steps = max_steps

    @classmethod
    def map(
        cls,
        agent: Any,
        items: Iterable[Any],
        *,
        input: Callable[[Any], str] | None = None,
        max_concurrency: int | None = None,
        on_error: str = "fail",
        name: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> Parallel:
        """One branch of `agent` (or a network) per item, in the items' order (see module
        docstring).

        `input(item)` is the branch's user message (default `str(item)`), refused as a run's
        input is (a `MessageError` naming the item for a NUL or a lone surrogate); `name` defaults
        to `"<agent>.map"`. Branch ids are `"<name>/<agent>#<i>"`. `max_concurrency`,
        `on_error` and `max_steps` are `Parallel`'s.
        """
        try:
            iterator = iter(items)
        except TypeError as error:  # not iterable: say whose fan-out, not iter()'s words
            raise ConfigurationError(
                f"Parallel.map over agent {_agent_name(agent)!r}: items must be an iterable "
                f"of the branches' items, got {type(items).__name__}"
            ) from error
        values = list(iterator)
        if not values:
            raise ConfigurationError(f"Parallel.map over agent {_agent_name(agent)!r}: no items")
        if input is not None and not callable(input):
            raise ConfigurationError(f"Parallel.map: input={input!r} is not callable")
        agent_name = _agent_name(agent)
        fork = name if name is not None else f"{agent_name}.map"
        made = cls.__new__(cls)
        made._setup(fork, max_concurrency, on_error, max_steps)
        branches = []
        for index, item in enumerate(values):
            text = input(item) if input is not None else str(item)
            if not isinstance(text, str):
                raise ConfigurationError(
                    f"Parallel.map {fork!r}: input() returned {type(text).__name__} for item "
                    f"{index}, expected str"
                )
            # the branch's user message, checked as a run's input is (items often come from
            # a model's answer): else the model is asked and paid before the thread's commit
            # or the request's encoding fails
            problem = text_problem(text)
            if problem is not None:
                raise MessageError(
                    f"Parallel.map {fork!r}: the input of item {index} holds {problem}",
                    index=index,
                    field="input",
                )
            branches.append(Branch(f"{fork}/{agent_name}#{index}", agent, index, text, item))
        made.branches = tuple(branches)
        return made

    @classmethod
    def restore(
        cls,
        name: str,
        branches: Iterable[Branch],
        *,
        on_error: str = "fail",
        max_concurrency: int | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> Parallel:
        """A fan-out rebuilt from its branches as they were (a durable run's recorded
        decision), ids, inputs and items included."""
        made = cls.__new__(cls)
        made._setup(name, max_concurrency, on_error, max_steps)
        made.branches = tuple(branches)
        if not made.branches:
            raise ConfigurationError(f"Parallel {name!r}: no branches")
        return made

    def bind(self, resolve: Callable[[Any], Any]) -> Parallel:
        """This fan-out with each branch's agent resolved by `resolve` (the network's)."""
        bound = Parallel.__new__(Parallel)
        bound.name = self.name
        bound.on_error = self.on_error
        bound.max_concurrency = self.max_concurrency
        bound.max_steps = self.max_steps
        bound.branches = tuple(
            Branch(b.id, resolve(b.agent), b.index, b.input, b.item) for b in self.branches
        )
        return bound

    @property
    def agents(self) -> list[Any]:
        """The branches' agents (or names), in declared order."""
        return [branch.agent for branch in self.branches]

    def __len__(self) -> int:
        return len(self.branches)

    def __repr__(self) -> str:
        return f"Parallel({self.name!r}, branches={[b.id for b in self.branches]})"


def _agent_name(agent: object) -> str:
    if isinstance(agent, Parallel):
        raise ConfigurationError(
            f"Parallel: a branch is an agent or a network, not another fan-out ({agent!r}); "
            "return the inner fan-out from the router after the join, or from the router "
            "of a network branch"
        )
    name = agent if isinstance(agent, str) else getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        raise ConfigurationError(f"Parallel: {agent!r} is not an agent, an agent name or a network")
    return name


def _unique_keys(names: list[str]) -> list[str]:
    """Branch keys: the agent's name, numbered (`name#i`) when the agent appears twice."""
    repeated = {name for name in names if names.count(name) > 1}
    return [f"{name}#{i}" if name in repeated else name for i, name in enumerate(names)]
