"""The A2A request handler: the SDK's `RequestHandler`, answered through the serving layer.

The SDK (`a2a-sdk`) parses and answers the protocol (JSON-RPC 1.0 and 0.3, its errors, its
SSE framing); this handler decides, with `network.serving`, what each request may do:

- `message/send`, `message/stream`: the message's `contextId` is the thread (a new one when
  absent), the request's principal is the `authorize` hook's, the thread is admitted (404 for
  another principal's, one run per thread), and the run is a task. A message naming its
  `taskId` continues that task: it must be `input-required`, and its answers settle the
  approvals the task waits on, exactly once, through the same pending record an AG-UI
  `resume` settles (`network.serving.approvals`), from any process on the store.
- `tasks/get`, `tasks/cancel`, resubscribe (`SubscribeToTask`), `tasks/list`: the
  principal's own tasks only (`network.a2a.tasks`); anyone else's is `TaskNotFoundError`.
- Runs go on in the server's task group (`network.a2a.live`): `tasks/cancel` stops one
  running in this process; a dropped stream does not. A task waiting for approvals
  (`input-required`) is cancelled through their claim, from any process on the store, unless
  an answer came first (`network.a2a.cancel_waiting`).

Refusals (`RequestError`) become the SDK's errors, naming the serving layer's code in
`data`; anything else a run raises is screened (`network.serving.screening`): the client
reads the library's error text or `internal error (reference err_...)`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import RequestHandler
from a2a.server.request_handlers.request_handler import validate_request_params
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    PushNotificationNotSupportedError,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)
from a2a.utils.errors import A2AError
from a2a.utils.proto_utils import validate_proto_required_fields
from a2a.utils.task import apply_history_length, validate_history_length, validate_page_size
from anyio.abc import TaskGroup

from network.a2a.cancel_waiting import cancel_waiting
from network.a2a.live import LiveTask, LiveTasks, Subscriptions
from network.a2a.message_in import read_message
from network.a2a.message_out import Progress, failed, outcome, status
from network.a2a.orphaned import UNFINISHED, ended_if_orphaned
from network.a2a.state_filter import check_status_filter
from network.a2a.tasks import TaskRecords
from network.history.messages import UserMessage
from network.ids import new_id
from network.logger import LazyLogger
from network.run.context import RunContext
from network.run.emitter import Listener
from network.run.interrupts import restore_rejected
from network.serving.admission import Admission, RunRequest
from network.serving.approvals import pair_answers
from network.serving.client_writes import check_scopes
from network.serving.errors import THREAD_BUSY_RETRY_AFTER, RequestError
from network.serving.limits import check_run_id, check_thread_id
from network.serving.screening import screened
from network.serving.threads import ServedThreads
from network.telemetry.propagation import continue_remote, incoming
from network.threads.ids import MAX_ID_LENGTH

LOGGER = "agent_network.a2a"
REQUEST = "agent_network_request"  # the Starlette request, in a ServerCallContext's state
POLL_SECONDS = 0.5  # how often a resubscription to a task of another process reads it
TERMINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_REJECTED,
    }
)
ANSWER_POLLS = 20  # a cancel that lost to an answer looks this often for its run here
WAITING = "interrupts"  # the task's metadata: the approvals it waits on

log = LazyLogger(LOGGER)
T = TypeVar("T")


@dataclass(slots=True)
class Job:
    """A task admitted on its thread, ready to run."""

    live: LiveTask
    admission: Admission
    ctx: RunContext


class NetworkHandler(RequestHandler):
    """Answers A2A requests by running a network on its served threads (module docstring)."""

    def __init__(self, served: ServedThreads, records: TaskRecords, card: AgentCard) -> None:
        self.served = served
        self.records = records
        self.card = card
        self.live = LiveTasks()
        self.subscriptions = Subscriptions()
        self.group: TaskGroup | None = None  # the server's: set while the app runs

    # -- messages ---------------------------------------------------------------------------

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        job = await _answered(self._begin(params, context))
        first = job.live.snapshot()
        self._launch(job)
        if params.configuration.return_immediately:  # its history as asked, as a blocking send's
            return apply_history_length(first, params.configuration)
        await job.live.done.wait()
        return apply_history_length(job.live.snapshot(), params.configuration)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        job = await _answered(self._begin(params, context))
        updates = job.live.subscribe()
        first = job.live.snapshot()
        self._launch(job)
        async with updates:
            yield first
            async for update in updates:
                yield update

    # -- tasks ------------------------------------------------------------------------------

    # A task's id is required (the SDK's own handler checks so): a request naming none was
    # looked up as the task '' and answered TaskNotFoundError, not as invalid params.
    @validate_request_params
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        validate_history_length(params)
        _, task = await _answered(self._find(params.id, context))
        return apply_history_length(task, params)

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        validate_history_length(params)  # the SDK's own handler's checks
        if params.HasField("page_size"):
            validate_page_size(params.page_size)
        await check_status_filter(_request(context))

        async def listed() -> ListTasksResponse:
            principal = await self.served.principal(_request(context), None)
            return await self.records.list(params, principal)

        return await _answered(listed())

    @validate_request_params
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        principal, task = await _answered(self._find(params.id, context))
        live = self.live.get(task.id)
        state = task.status.state
        if live is None and state == TaskState.TASK_STATE_INPUT_REQUIRED:
            ended = await _answered(self._cancel_waiting(task, principal))
            if ended is not None:
                return ended
            live = await self._continued(task.id)  # an answer came first: its run goes on
            if live is None:
                raise TaskNotCancelableError(
                    message=f"task {task.id}: an answer to its approvals came first (or "
                    "another request held its thread): its run goes on in another server "
                    "process, cancel it there; if it still waits, cancel again"
                )
        if live is not None:
            live.scope.cancel()
            await live.done.wait()
            return live.snapshot()
        if state in TERMINAL:
            raise TaskNotCancelableError(
                message=f"task {task.id} is {TaskState.Name(state)}: it has ended"
            )
        raise TaskNotCancelableError(
            message=f"task {task.id} runs in another server process; cancel it there"
        )

    @validate_request_params
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        principal, task = await _answered(self._find(params.id, context))
        if task.status.state in TERMINAL:
            raise UnsupportedOperationError(
                message=f"task {task.id} is in terminal state {TaskState.Name(task.status.state)}"
            )
        try:
            with self.subscriptions.held(task.id):  # the refusal before the stream starts
                async with contextlib.aclosing(self._followed(task, principal)) as events:
                    async for event in events:
                        yield event
        except RequestError as refused:  # only `held` raises one: `_followed` answers its own
            raise to_a2a_error(refused) from None

    async def _followed(self, task: Task, principal: str | None) -> AsyncGenerator[Any, None]:
        """`task` as it is, then its updates until it ends (or waits for input)."""
        live = self.live.get(task.id)
        if live is not None:
            updates = live.subscribe()
            async with updates:
                yield live.snapshot()
                async for update in updates:
                    yield update
            return
        yield task
        # Running in another process (or waiting): its record changes as it goes.
        seen = task.status.SerializeToString()
        while task.status.state not in TERMINAL and task.status.state != (
            TaskState.TASK_STATE_INPUT_REQUIRED
        ):
            await anyio.sleep(POLL_SECONDS)
            found = await _answered(self._checked(task.id, principal))
            if found is None:
                return
            task = found
            now = task.status.SerializeToString()
            if now != seen:
                seen = now
                yield task

    # -- what this server does not do -------------------------------------------------------

    async def _no_push_notifications(self, params: Any, context: ServerCallContext) -> Any:
        """Every push notification request: this server sends none."""
        raise PushNotificationNotSupportedError

    on_create_task_push_notification_config = _no_push_notifications
    on_get_task_push_notification_config = _no_push_notifications
    on_list_task_push_notification_configs = _no_push_notifications
    on_delete_task_push_notification_config = _no_push_notifications

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """The card declares no extended card: A2A 1.0 (§3.3.4) answers that with
        `UnsupportedOperationError`, `ExtendedAgentCardNotConfiguredError` being for an
        agent that declares one it has not configured."""
        raise UnsupportedOperationError(
            message="this agent has no extended agent card (its card's "
            "capabilities.extendedAgentCard is false)"
        )

    # -- the flow ---------------------------------------------------------------------------

    async def _find(self, task_id: str, context: ServerCallContext) -> tuple[str | None, Task]:
        """The principal and their task `task_id` (the freshest form), or TaskNotFoundError."""
        request = _request(context)
        principal = await self.served.principal(request, None)
        live = self.live.get(task_id)
        task: Task | None
        if live is not None and live.principal == principal:
            task = live.snapshot()
        else:
            task = await self.records.get(task_id, principal)
        if task is None or await self.served.principal(request, task.context_id) != principal:
            shown = task_id if len(task_id) <= MAX_ID_LENGTH else f"{task_id[:64]}..."
            raise TaskNotFoundError(message=f"no task {shown!r}")  # a stranger's id, bounded
        if live is None and task.status.state in UNFINISHED:
            task = await self._unorphaned(task, principal)
        return principal, task

    async def _checked(self, task_id: str, principal: str | None) -> Task | None:
        """The principal's task `task_id` from its record, ended `failed` when its server
        process died while it ran (`network.a2a.orphaned`)."""
        task = await self.records.get(task_id, principal)
        if task is not None and task.status.state in UNFINISHED and self.live.get(task_id) is None:
            task = await self._unorphaned(task, principal)
        return task

    async def _unorphaned(self, task: Task, principal: str | None) -> Task:
        """`task` (unfinished, not running here), ended when no process runs it any more."""

        async def read() -> Task | None:
            return await self.records.get(task.id, principal)

        async def save(ended: Task) -> None:
            await self.records.save(ended, principal)

        checked = await ended_if_orphaned(self.served, task, principal, read, save)
        return task if checked is None else checked

    async def _cancel_waiting(self, task: Task, principal: str | None) -> Task | None:
        """`task` (input-required) ended `canceled`, its approvals claimed as canceled
        (`network.a2a.cancel_waiting`); None when an answer came first."""
        ended = Task()
        ended.CopyFrom(task)
        if WAITING in ended.metadata.fields:  # it waits on nothing any more
            del ended.metadata.fields[WAITING]
        live = LiveTask(ended, principal)
        live.publish(status(live, TaskState.TASK_STATE_CANCELED))

        async def save() -> Task:
            await self.records.save(live.task, principal)
            return live.snapshot()

        return await cancel_waiting(
            self.served, task.id, task.context_id, principal, _waited_on(task), save
        )

    async def _continued(self, task_id: str) -> LiveTask | None:
        """The run of an answer that came first, once it runs in this process (it starts
        there within moments, or runs in another process: None)."""
        for _ in range(ANSWER_POLLS):
            live = self.live.get(task_id)
            if live is not None:
                return live
            await anyio.sleep(POLL_SECONDS / 10)
        return None

    async def _begin(self, params: SendMessageRequest, context: ServerCallContext) -> Job:
        """Check the message, admit it on its thread and start its run, or refuse it."""
        validate_proto_required_fields(params)
        validate_history_length(params.configuration)
        if params.configuration.HasField("task_push_notification_config"):
            # the card declares none: a client asking for them would wait for a call that
            # never comes (the SDK's own handler, with no push store, ignores the ask too)
            raise PushNotificationNotSupportedError(
                message="this agent sends no push notifications (its card's "
                "capabilities.pushNotifications is false): leave out "
                "configuration.taskPushNotificationConfig, and stream or poll the task"
            )
        request = _request(context)
        message = params.message
        asked = read_message(message)
        task_id = message.task_id or None
        context_id = message.context_id or None
        stored: Task | None = None
        if task_id is not None:
            check_run_id(task_id, "taskId")
            if context_id is None:  # the task names its context
                found = await self.records.get(task_id, await self.served.principal(request, None))
                if found is None:
                    raise TaskNotFoundError(message=f"no task {task_id!r}")
                context_id = found.context_id
        context_id = check_thread_id(context_id or new_id("ctx_"), "contextId")
        principal = await self.served.principal(request, context_id)
        if task_id is not None:
            stored = await self.records.get(task_id, principal)
            if stored is None:
                raise TaskNotFoundError(message=f"no task {task_id!r}")
            _check_continuable(stored, context_id, running=self.live.get(task_id) is not None)
        if self.group is None:  # before the admission: nothing to release
            raise RuntimeError("the A2A app is not running (its lifespan starts its runs)")
        admission = await self.served.admit(context_id, new_id("run_"), principal)
        try:
            ctx = await self._start(admission, asked, stored, context_id)
            # the caller's span (its `traceparent`): the run's trace continues it
            continue_remote(ctx, incoming(getattr(request, "headers", None)))
            task = _task_of(stored, message, task_id or new_id("task_"), context_id)
            live = LiveTask(task, principal)
            live.publish(status(live, TaskState.TASK_STATE_WORKING))
            await self.records.save(live.task, principal)
        except BaseException:
            await admission.release()
            raise
        self.live.add(live)
        return Job(live, admission, ctx)

    async def _start(
        self, admission: Admission, asked: Any, stored: Task | None, context_id: str
    ) -> Any:
        record = admission.record
        pending = record.interrupts
        if stored is not None:
            waited = set(_waited_on(stored))
            if not waited & {interrupt.id for interrupt in pending}:
                raise RequestError(
                    409,
                    "interrupt_answered",
                    f"task {stored.id}'s approvals were already answered",
                )
        elif pending:
            raise RequestError(
                409,
                "interrupt_pending",
                f"context {context_id!r} waits for approvals of one of its tasks: answer that "
                "task (a message with its taskId and an `answers` data part) first",
            )
        answered = pair_answers(
            self.served.network, context_id, pending, asked.answers or None, field="answers"
        )
        check_scopes(asked.writes)
        data = {**record.state, **asked.writes}
        restore_rejected(data, answered)
        said = [UserMessage(content=asked.text, id=new_id("msg_"))] if asked.text else []
        if not said and not answered:
            raise InvalidParamsError(message="the message has no text part")
        return await admission.start(RunRequest(messages=said, data=data, answered=answered))

    def _launch(self, job: Job) -> None:
        if self.group is None:
            raise RuntimeError("the A2A app is not running (its lifespan starts its runs)")
        self.group.start_soon(self._run, job)

    async def _run(self, job: Job) -> None:
        live, admission = job.live, job.admission
        ending: list[Any] = []
        try:
            with live.scope:
                try:
                    result = await admission.execute(job.ctx, sinks=[Listener(Progress(live))])
                    ending = outcome(live, result)
                    waiting = [interrupt.id for interrupt in result.interrupts]
                    if waiting:
                        live.task.metadata.update({WAITING: waiting})
                except Exception as error:
                    told, _ = screened(
                        error,
                        logger=LOGGER,
                        event="a2a.task_failed",
                        task_id=live.task.id,
                        context_id=live.task.context_id,
                    )
                    ending = [failed(live, told)]
        finally:
            with anyio.CancelScope(shield=True):
                updates = ending or [status(live, TaskState.TASK_STATE_CANCELED)]
                for update in updates:
                    live.record(update)
                # Saved before the thread is let go: a task found unfinished while no run
                # holds its thread is one whose process died (`network.a2a.orphaned`). A
                # store failure is logged by the serving layer; the run's outcome stands.
                with contextlib.suppress(RequestError):
                    await self.records.save(live.task, live.principal)
                await admission.release()
                # told after the thread is free: a client that reads the end and sends the
                # context's next message at once finds it free
                for update in updates:
                    live.broadcast(update)
                self.live.remove(live)
                live.finish()


def _check_continuable(task: Task, context_id: str, *, running: bool) -> None:
    if task.context_id != context_id:
        raise InvalidParamsError(
            message=f"contextId {context_id!r} is not the context of task {task.id!r}"
        )
    state = task.status.state
    if state in TERMINAL:
        raise UnsupportedOperationError(
            message=f"task {task.id} is {TaskState.Name(state)}: it takes no more messages; "
            "send one without taskId to start another task in the same context"
        )
    if running or state != TaskState.TASK_STATE_INPUT_REQUIRED:
        raise InvalidRequestError(
            message=f"task {task.id} is working: wait for it, or cancel it",
            data={"code": "thread_busy", "status": 409, "retryAfter": THREAD_BUSY_RETRY_AFTER},
        )


def _waited_on(task: Task) -> list[str]:
    waiting = task.metadata.fields.get(WAITING)
    if waiting is None:
        return []
    return [value.string_value for value in waiting.list_value.values]


def _task_of(stored: Task | None, message: Message, task_id: str, context_id: str) -> Task:
    task = Task()
    if stored is not None:
        task.CopyFrom(stored)
        if WAITING in task.metadata.fields:
            del task.metadata.fields[WAITING]
        if task.status.HasField("message"):  # the question answered joins the history
            task.history.append(task.status.message)
        task.status.ClearField("message")
    else:
        task.id, task.context_id = task_id, context_id
        task.status.state = TaskState.TASK_STATE_SUBMITTED
    said = Message()
    said.CopyFrom(message)
    said.task_id, said.context_id = task.id, context_id
    task.history.append(said)
    return task


def _request(context: ServerCallContext) -> Any:
    return context.state.get(REQUEST)


async def _answered(pending: Awaitable[T]) -> T:
    """`pending`'s answer; a refusal as the SDK's error naming the serving layer's code, any
    other failure screened."""
    try:
        return await pending
    except A2AError:
        raise
    except RequestError as refused:
        raise to_a2a_error(refused) from None
    except Exception as error:
        told, _ = screened(error, logger=LOGGER, event="a2a.request_failed")
        raise InternalError(message=told) from None


def to_a2a_error(refused: RequestError) -> A2AError:
    """The SDK error answering a `RequestError` (its code, status, key and `retryAfter` in
    `data`)."""
    data: dict[str, Any] = {"code": refused.code, "status": refused.status}
    if refused.key is not None:
        data["key"] = refused.key
    if refused.retry_after is not None:  # 503 `server_busy`: the HTTP header's, in JSON-RPC
        data["retryAfter"] = refused.retry_after
    kind: Callable[..., A2AError]
    if refused.status >= 500:
        kind = InternalError
    elif refused.code == "thread_not_found":
        kind = TaskNotFoundError if "task" in refused.message else InvalidParamsError
    elif refused.status in (401, 403, 409):
        kind = InvalidRequestError
    else:
        kind = InvalidParamsError
    return kind(message=refused.message, data=data)
