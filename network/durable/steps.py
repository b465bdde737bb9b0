"""`DurableSteps`: the `StepRunner` of a durable run; each call is a DBOS step.

Inside the run's workflow, each router decision, model call (a context policy's summary too)
and tool call is a DBOS step: its outcome (its output, or its error) is written to DBOS's step
table before the run goes on, and when the workflow is executed again after a crash, a step
that was recorded returns its recorded outcome without running. The rows are DBOS's own,
read once when an execution begins and written with one statement per step
(`network.durable.step_table` says why not through DBOS's step call). The step numbers are
drawn from DBOS's counter before any await, in call order, so concurrent tool calls of one
answer get the same numbers on every attempt. A step that was in flight when the process died
was not recorded: it runs again (at least once; see docs/durable.md on idempotent tools).

A router decision's output is the exception: it rides on the statement that records the next
step (`Recording.defer`), as nothing outside the run depends on it until then: the model call
it led to is in flight, and a tool runs only after that call's record, which carries the
decision. A step that acts outside the run before its record (a tool, a thread's load or
commit) has the decisions before it written first (`settle`), and so does the run's end:
before its final event, by the statement that appends that event to the run's event log on
PostgreSQL (`EventLog.carrier`). A process killed between a decision and the next record asks
the router again when the run resumes (docs/durable.md, "A router decision rides on the next
step").

A `Parallel` fan-out's branches run concurrently, so their calls do not come in the same
order on every attempt: each branch gets its own runner (`fork`), whose steps take numbers
computed from the branch's position and its own step count, and are named after the branch
(`network.durable.fan_out` explains the layout and why). The router step records a fan-out
whole (`network.durable.route_record`), so a replay runs the same branches.

Replaying a step also replays its effects on the run: router and tool steps record the state
writes they made, re-applied on replay (`state_writes`: the values after the step, or, in a
branch's store or a tool's staged view, the writes as made), and a router step the tokens an
LLM router spent (`router_spend`); the model step's answer feeds the agent exactly as the live
answer did. The first step that really runs opens the replay gate, which sends a STATE_SNAPSHOT
of the rebuilt state to the run's event consumers.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from network.durable.event_log import EventLog
from network.durable.fan_out import BranchSlots, FanOut
from network.durable.process import RecordedStepError, UnrecordableStepError
from network.durable.replay_gate import ReplayGate
from network.durable.route_record import record_choice, replayed_choice
from network.durable.router_spend import UsageMark, apply_spend
from network.durable.state_writes import apply_writes, writes_mark, writes_since
from network.durable.step_table import StepOutcome, StepRow, StepTable, step_table
from network.logger import get_logger
from network.run.context import Router, RunContext
from network.state.state import State

T = TypeVar("T")


class Recording:
    """The workflow execution's recorded steps and where new ones are written."""

    def __init__(self) -> None:
        from dbos._context import get_local_dbos_context  # noqa: PLC0415 (dbos is optional)
        from dbos._dbos import _get_dbos_instance  # noqa: PLC0415 (dbos is optional and heavy)

        ctx = get_local_dbos_context()
        if ctx is None or not ctx.is_workflow() or ctx.owner_xid is None:
            raise RuntimeError("a durable run's steps are recorded inside its workflow")
        dbos = _get_dbos_instance()
        # DBOS's workflow context (its step counter and ownership): `Any`, as its class is private
        self.context: Any = ctx
        self.workflow_id: str = ctx.workflow_id
        self.owner: str = ctx.owner_xid
        self.serializer: Any = dbos._serializer
        # DBOS's serialization of a step's outcome, resolved once per execution, not per step
        self.serialize, self.serialization = outcome_serializer(self.serializer)
        self.table: StepTable = step_table(dbos._sys_db)
        self.rows: dict[int, StepRow] = {}
        self.log: EventLog | None = None  # the run's event log: its due events ride on steps
        # router decisions made and not written yet: they ride on the next step's statement
        self.deferred: list[StepOutcome] = []
        # set when the write carrying some ends (asyncio's: the run is on DBOS's asyncio loop,
        # and anyio's event costs ten times as much to make)
        self._carrying: asyncio.Event | None = None

    def draw(self) -> int:
        """The run's next step number (DBOS's counter, as its own steps draw it)."""
        ctx = self.context
        ctx.function_id += 1
        number: int = ctx.function_id
        return number

    def step_context(self, number: int) -> Any:
        """DBOS's context for a step at `number`, as DBOS's own steps run in: inside it a DBOS
        step runs as a plain call (it would otherwise draw a number the replay does not), and
        `DBOS.step_id` is this step's number. The workflow's counter is left as it was."""
        ctx = self.context
        counter = ctx.function_id
        ctx.function_id = number - 1  # snapshot_step_ctx takes counter + 1; no await between
        try:
            return ctx.snapshot_step_ctx()
        finally:
            ctx.function_id = counter

    def replay(self, number: int, name: str, row: StepRow) -> Any:
        """The recorded outcome of step `number`: its output, or its error raised."""
        from dbos import error  # noqa: PLC0415 (dbos is optional and heavy)
        from dbos._serialization import (  # noqa: PLC0415 (dbos is optional and heavy)
            deserialize_exception,
            deserialize_value,
        )

        if row.name != name:
            raise error.DBOSUnexpectedStepError(self.workflow_id, number, name, row.name)
        if row.error is not None:
            raise deserialize_exception(row.error, row.serialization, self.serializer)
        return deserialize_value(row.output, row.serialization, self.serializer)

    async def write(
        self, number: int, name: str, started: int, *, output: Any = None, error: Any = None
    ) -> None:
        """Record step `number`'s outcome (without blocking the event loop), with the router
        decisions deferred before it (`defer`) in the same statement."""
        await self._write(self.outcome(number, name, started, output, error))

    def defer(self, number: int, name: str, started: int, output: Any) -> None:
        """Step `number` (a router decision) completed now: its record rides on the next
        step's statement (`write`), or is written by `settle`."""
        outcome = self.outcome(number, name, started, output, None)
        self.deferred.append(outcome._replace(completed=int(time.time() * 1000)))

    async def settle(self) -> None:
        """Write the deferred decisions now, by themselves (nothing when none waits)."""
        if self.deferred or self._carrying is not None:
            await self._write(None)

    async def _write(self, outcome: StepOutcome | None) -> None:
        """`outcome` (if any) and the deferred decisions, in one statement. A write that
        finds deferred decisions on their way with another step (a fan-out's branches write
        concurrently) waits for that statement first: no step is recorded before a decision
        that came before it. A statement that fails leaves its decisions deferred (each keeps
        its completion time, so writing one again that had committed is recognised)."""
        while self._carrying is not None:
            await self._carrying.wait()
        carried = self.deferred
        if not carried:
            if outcome is not None:
                await self.table.record_async(outcome, self.log)
            return
        self.deferred = []
        done = self._carrying = asyncio.Event()
        try:
            if outcome is None:
                await self.table.record_async(carried[-1], self.log, carried[:-1])
            else:
                await self.table.record_async(outcome, self.log, carried)
        except BaseException:
            self.deferred[:0] = carried
            raise
        finally:
            self._carrying = None
            done.set()

    def outcome(self, number: int, name: str, started: int, output: Any, error: Any) -> StepOutcome:
        """Step `number`'s outcome, serialized, to record."""
        if error is not None:
            from dbos._serialization import serialize_exception  # noqa: PLC0415 (dbos is optional)

            text, serialization = serialize_exception(recordable(error), None, self.serializer)
            output_text = None
        else:
            try:
                output_text, serialization = self.serialize(output), self.serialization
            except Exception as exc:
                raise UnrecordableStepError(self.workflow_id, name, exc) from exc
            text = None
        return StepOutcome(
            self.workflow_id, self.owner, number, name, started, output_text, text, serialization
        )


def recordable(error: Exception) -> Exception:
    """`error` when pickle records it and rebuilds it, else a `RecordedStepError` with its
    type's name and message. A model or a router whose exception holds a lock (or whose class
    takes more than its message to build) failed the run with pickle's `TypeError` instead of
    its own error, or a replay of its step with the `TypeError` of rebuilding it. Checked on
    the error path only: a step that succeeds costs nothing more."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return RecordedStepError(f"{type(error).__name__}: {error}", type(error).__name__)
    return error


def outcome_serializer(serializer: Any) -> tuple[Callable[[Any], str], str]:
    """How DBOS's `serialize_value(output, None, serializer)` writes a step's output, resolved
    once: the function it ends in and the serialization's name it returns (it picks them by
    the serializer's name on every call: four calls a step, for the same answer)."""
    from dbos._serialization import (  # noqa: PLC0415 (dbos is optional and heavy)
        DBOSDefaultSerializer,
        DBOSPortableJSON,
        serialization_for_type,
    )

    name = serialization_for_type(None, serializer)
    if name == DBOSPortableJSON.name():
        return DBOSPortableJSON.serialize, name
    if name == DBOSDefaultSerializer.name():
        return DBOSDefaultSerializer.serialize, name
    return serializer.serialize, serializer.name()


class DurableSteps:
    """Records (or replays) the steps of one workflow execution."""

    def __init__(
        self, branch: BranchSlots | None = None, recording: Recording | None = None
    ) -> None:
        self.gate: ReplayGate | None = None
        self.ctx: RunContext | None = None
        self.fresh = False  # this execution is the run's first (nothing to replay)
        self.executed = 0  # steps that really ran in this execution (the rest replayed)
        from dbos._context import EnterDBOSStepCtx  # noqa: PLC0415 (dbos is optional and heavy)

        self._enter_step = EnterDBOSStepCtx
        self._recording = recording if recording is not None else Recording()
        # A branch's runner: its step numbers, and its id in each step's name
        self._branch = branch
        self._suffix = f"@{branch.id}" if branch is not None else ""
        self._fan_out: FanOut | None = None  # the fan-out forked and not joined yet

    async def begin(self) -> bool:
        """The run's first step: True on its first execution, False when it is replayed.

        Reads the workflow's recorded steps and, on a first execution, records `run_started`,
        by which a later execution knows it resumes (one statement on PostgreSQL)."""
        recording = self._recording
        number = recording.draw()
        first = recording.outcome(number, "run_started", int(time.time() * 1000), True, None)
        recording.rows = await recording.table.begin_async(first)
        row = recording.rows.get(number)
        if row is not None:
            recording.replay(number, "run_started", row)
            return self.fresh
        self.fresh = True
        return self.fresh

    def write_events_with_steps(self, log: EventLog) -> None:
        """Let `log`'s due events ride on this run's recorded steps (`EventLog.ride`), and its
        last write (the run's final event) wait for the decisions still deferred, riding on
        their statement (`EventLog.carrier`)."""
        self._recording.log = log
        log.carrier = self.settle

    async def _run(
        self,
        name: str,
        call: Callable[[], Awaitable[T]],
        *,
        live: bool,
        outside: bool = False,
        decision: bool = False,
    ) -> T:
        """Step `name`: replayed when recorded, else `call` run and its outcome recorded.

        `outside`: the call acts outside the run before it is recorded (a tool, a thread's
        commit): the router decisions deferred before it are written first. `decision`: a
        router decision's output is not written now but deferred, to ride on the next step's
        statement (its error is written at once)."""
        recording = self._recording
        # before any await: numbers in call order (a branch's: in its own order)
        branch = self._branch
        number = recording.draw() if branch is None else branch.draw()
        name += self._suffix
        row = recording.rows.get(number)
        if row is not None:
            replayed: T = recording.replay(number, name, row)
            return replayed
        self.executed += 1
        if outside:  # (not inside the try: the step did not run when this fails)
            await recording.settle()
        context = recording.step_context(number)
        started = int(time.time() * 1000)
        try:
            gate = self.gate
            if live and gate is not None and not gate.is_open:
                await gate.open(self.ctx)
            with self._enter_step({"name": name, "operationType": "step"}, context):
                result = await call()
        except Exception as exc:
            await recording.write(number, name, started, error=exc)
            raise
        if decision:
            recording.defer(number, name, started, result)
        else:
            await recording.write(number, name, started, output=result)
        return result

    async def route(self, ctx: RunContext, router: Router) -> Any:
        """The router's decision (agent names and fan-outs, a `Stop`, or None), recorded
        with its writes (`route_record`)."""
        self.ctx = ctx
        if self.gate is not None:
            self.gate.ctx = ctx
        kv = ctx.state.kv
        ran = False

        async def decide() -> tuple[Any, Any, Any]:
            nonlocal ran
            ran = True
            before = writes_mark(kv)
            mark = UsageMark.of(ctx)  # an LLM router's tokens: counted again on replay
            choice = router(ctx)
            if hasattr(choice, "__await__"):
                choice = await choice
            return record_choice(ctx.network, choice), writes_since(kv, before), mark.spent(ctx)

        record, writes, spend = await self._run("router", decide, live=True, decision=True)
        if not ran:
            apply_writes(kv, writes)
            apply_spend(ctx, spend)
        return replayed_choice(record)  # live or replayed, the decision as recorded

    async def model(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        """One model request of `agent`: its recorded answer (or error)."""
        return await self._run(f"model:{agent}", call, live=True)

    async def tool(self, name: str, state: State, call: Callable[[], Awaitable[T]]) -> T:
        """One tool call against `state`: its record, and its writes when replayed."""
        kv = state.kv
        ran = False

        async def invoke() -> tuple[T, Any]:
            nonlocal ran
            ran = True
            before = writes_mark(kv)
            record = await call()
            failed = getattr(record, "is_error", False)
            return record, [] if failed else writes_since(kv, before)

        record, writes = await self._run(f"tool:{name}", invoke, live=True, outside=True)
        if not ran:
            apply_writes(kv, writes)
        return record

    async def summary(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        """A context policy's summary for a request of `agent`: the recorded `Summary`, so a
        replayed run sends the model the summary it sent, and the summariser runs once."""
        return await self._run(f"summary:{agent}", call, live=True)

    async def step(self, name: str, call: Callable[[], Awaitable[T]]) -> T:
        """A thread's load or commit."""
        return await self._run(name, call, live=False, outside=True)

    async def settle(self, *, failed: bool = False) -> None:
        """Write the router decisions still deferred (the run ends: its last decision is
        recorded with the run's last events, or before them, and before its outcome: the event
        log calls this, `write_events_with_steps`). When the run `failed`, its own
        error is the one its caller gets: a failure to write them is logged, not raised."""
        if not failed:
            await self._recording.settle()
            return
        try:
            await self._recording.settle()
        except Exception as exc:
            get_logger().warning(
                "durable.decisions_unrecorded",
                workflow_id=self._recording.workflow_id,
                error=type(exc).__name__,
            )

    def fork(self, branch_ids: Sequence[str]) -> list[DurableSteps]:
        """One runner per branch of the fan-out about to run (`network.durable.fan_out`)."""
        if self._branch is not None or self._fan_out is not None:
            raise RuntimeError("a durable fan-out cannot fork inside another")
        fan_out = self._fan_out = FanOut(branch_ids)
        runners = []
        for slots in fan_out.branches:
            runner = DurableSteps(slots, self._recording)
            runner.gate, runner.ctx, runner.fresh = self.gate, self.ctx, self.fresh
            runners.append(runner)
        return runners

    def join(self) -> None:
        """The branches ended: the run's next steps are numbered after theirs."""
        fan_out, self._fan_out = self._fan_out, None
        if fan_out is not None:
            fan_out.join()
