"""`A2AModel`: a remote A2A agent answering an agent's calls, so it can join a team.

    travel = Agent("travel", description="Books trips.", model=A2AModel("https://trips.example"))
    team = Network("desk", agents=[planner, travel], router=...)   # a member of a team
    boss = Agent("boss", tools=[travel.as_tool()], ...)              # or a sub-agent tool

Each agent call sends one A2A message (`SendStreamingMessage`, or `SendMessage` when the
server does not stream) through the official `a2a-sdk` client (the `a2a` extra), 1.0 or 0.3
as the server's agent card says:

- what it sends: the new turn, the text of the conversation's messages since this agent last
  answered (the user's, and the other agents'), one text part. The remote keeps its own
  conversation under the A2A `contextId`: an agent whose model is an `A2AModel` gets the
  `remote_a2a` capability, which names one context per thread (per run without one) and agent,
  so a thread's later turns continue the remote's conversation;
- what it returns: the task's artifacts' text (data parts as JSON), else its final status
  message's, else the text of the message the server answered with. The remote's progress
  (its `working` status messages) streams as reasoning while it runs (`ReasoningDelta`, kept
  on the answer as `reasoning` and never sent back to a model), its answer as text: so a
  run streamed over AG-UI shows what the remote is doing, and `agent.as_tool()` shows it
  between SUBAGENT_STARTED and SUBAGENT_FINISHED;
- its usage: what the server reports in a `metadata.usage` object (`inputTokens`,
  `outputTokens`, `totalTokens`; on a task, an update, an artifact or a message, the last one
  read wins) is the call's usage, counted against the caller's `UsageLimits` as any model's;
- `input-required`: the remote's question (its status message, a data part as JSON) is the
  answer's text, and the answer says the task waits (`finish_reason="input_required"`, `raw`
  holds its `task_id`, `context_id` and the status message's data parts as `asked`). The
  `remote_a2a` capability makes it an interrupt of the calling run; the person's answer comes
  back as a request param (`REPLY_PARAM`), which this model sends to that same task (same
  `taskId` and `contextId`) instead of a new turn.

A call given up (the caller's run cancelled, a timeout, a bad event) cancels the remote's
task (`CancelTask`, a best effort of 5 seconds). One given up before the first event naming
the remote's task arrived keeps reading the stream, shielded and showing nothing more, until
that event arrives (then the task is cancelled) or 5 seconds pass (then there is no id to
cancel: the remote's task, if it ever started, is left to the remote). A remote that does
not stream is sent the message non-blocking (`SendMessage` with `returnImmediately`, 0.3's
`blocking: false`): it answers with its task at once, which is then read (`GetTask`, 50 ms
after, the wait doubling to 1 s) until it ends (`agents.models._a2a_poll`), so a call given
up while it works cancels it too. One that answers with the finished task anyway is read as
before, in one request.

A remote is a stranger, so it is bounded: `max_bytes` per HTTP answer (the card, each stream,
each `GetTask`), `timeout` seconds for the whole call (the polling too), `idle_timeout`
between two reads. A remote that goes past one, sends what is not A2A (malformed JSON, a
part with no content, a usage that is negative or not a number, another task's update),
fails its task, or cannot be reached is a `ModelError` naming the agent's model and what went
wrong (the remote's own failure text cut to 500 characters), which the run reports as any
model failure (and which a supervisor's model reads as a tool error when the agent runs as a
tool).

Decisions where the issue is silent: no tool schema is sent (a remote agent runs its own
tools), nor the system text (it has its own instructions); the agent card is read once per
model object and kept, and refused when its JSON-RPC endpoint is on another server than the
one asked (scheme, host and port): the token and the conversation would go there.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from agents.models._a2a_poll import follow
from agents.models._a2a_wire import (
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    MAX_PROGRESS_CHARS,
    Answer,
    Malformed,
    shortened,
)
from agents.models._client_options import check_headers, check_token
from agents.models._failures import safe_url
from agents.models.base import ChunkHandler, ModelRequest, ModelResponse, ReasoningDelta, TextDelta
from network.errors import ConfigurationError, ModelError
from network.history.messages import AssistantMessage
from network.history.results import Usage
from network.numbers import check_number
from network.urls import is_http_url

if TYPE_CHECKING:
    from agents.models._a2a_transport import BoundedTransport

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
CANCEL_GRACE = 5.0  # seconds a given-up call waits for the remote to take its cancellation
CONTEXT_PARAM = "a2a_context_id"
"""The `ModelRequest.params` key naming the remote context a call continues (set by the
`remote_a2a` capability; a request without it starts a new remote context)."""
REPLY_PARAM = "a2a_reply"
"""The `ModelRequest.params` key of a reply to a remote task waiting for input (set by the
`remote_a2a` capability when a person answered it): `{"task_id", "context_id", "parts"}`,
each part `{"text": str}` or `{"data": JSON}`. The call sends it to that task."""


class A2AModel:
    """A remote A2A agent as a model (see the module docstring).

    Args:
        url: the remote's base URL (its agent card is at `/.well-known/agent-card.json`).
        name: the model's name in errors, traces and usage (default `a2a:<url>`, the URL
            without its user info).
        token: a bearer token sent with every request.
        headers: more HTTP headers sent with every request.
        timeout: seconds the whole call may take.
        idle_timeout: seconds between two reads of an answer (a stream that goes quiet).
        max_bytes: the most bytes read of one HTTP answer.
    """

    provider = "a2a"  # its `gen_ai.provider.name` in traces
    structured_output = "prompted"  # a remote agent takes no response format

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
        idle_timeout: float = 60.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if not isinstance(url, str) or not is_http_url(url):
            raise ConfigurationError(
                f"A2AModel: url must be an http(s) URL with a host, got {url!r}"
            )
        if urlsplit(url).query or urlsplit(url).fragment:
            # the SDK reads the card at `<url>/.well-known/agent-card.json`: after a query or
            # a fragment that path is no path (every call failed, the card "not found")
            raise ConfigurationError(
                "A2AModel: url must have no query or fragment (the agent card is read at "
                f"<url>/.well-known/agent-card.json), got {safe_url(url)!r} with one"
            )
        if name is not None and (not isinstance(name, str) or not name):
            raise ConfigurationError(f"A2AModel: name must be a non-empty string, got {name!r}")
        self.url = url.rstrip("/")
        # what errors, traces and the default name show of it: no user name or password (a
        # URL may carry a credential there; a supervisor's model reads errors)
        self._shown = safe_url(self.url)
        self._userinfo = urlsplit(self.url).netloc.rpartition("@")[0]
        self.name = name or f"a2a:{self._shown}"
        self.timeout = check_number("A2AModel timeout", timeout, above=True)
        self.idle_timeout = check_number("A2AModel idle_timeout", idle_timeout, above=True)
        self.max_bytes = check_number("A2AModel max_bytes", max_bytes, integer=True, above=True)
        # checked here: httpx takes ASCII header values only, and failed each call with an
        # error blaming the remote ("could not be reached", "sent what is not A2A")
        self._headers = check_headers(f"model {self.name!r}", headers)
        token = check_token(self.name, token)
        if token is not None:
            self._headers["authorization"] = f"Bearer {token}"
        self._card: Any = None

    def __repr__(self) -> str:  # no token in a repr
        return f"A2AModel({self._shown!r})"

    async def complete(
        self, request: ModelRequest, on_chunk: ChunkHandler | None = None
    ) -> ModelResponse:
        """Send the new turn to the remote agent; its answer, streamed to `on_chunk`."""
        from agents.models._a2a_transport import BoundedTransport  # noqa: PLC0415 (httpx)

        reply = request.params.get(REPLY_PARAM)
        text = new_turn(request) if reply is None else ""
        transport = BoundedTransport(self.max_bytes)
        answer = Answer()
        try:
            with anyio.fail_after(self.timeout):
                await self._ask(request, text, transport, answer, on_chunk)
        except TimeoutError as exc:
            raise self._error(f"did not finish within {self.timeout:g} s") from exc
        except ModelError:
            raise
        except Malformed as exc:
            raise self._error(f"sent what is not A2A: {exc}") from exc
        except Exception as exc:
            raise self._failure(exc, transport) from exc
        response = self._response(answer)
        if on_chunk is not None and response.message.content:
            await on_chunk(TextDelta(response.message.content))  # the answer, once it is known
        return response

    async def _ask(
        self,
        request: ModelRequest,
        text: str,
        transport: BoundedTransport,
        answer: Answer,
        on_chunk: ChunkHandler | None,
    ) -> None:
        import httpx  # noqa: PLC0415
        from a2a.client import A2ACardResolver, ClientConfig, create_client  # noqa: PLC0415
        from a2a.types import Message, Part, Role, SendMessageRequest  # noqa: PLC0415
        from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER  # noqa: PLC0415

        headers = {VERSION_HEADER: PROTOCOL_VERSION_CURRENT, **self._headers}
        timeout = httpx.Timeout(self.timeout, read=self.idle_timeout)
        async with httpx.AsyncClient(transport=transport, headers=headers, timeout=timeout) as http:
            if self._card is None:
                card = await A2ACardResolver(http, self.url).get_agent_card()
                self._check_card(card)
                self._card = card
            config = ClientConfig(streaming=True, httpx_client=http)
            client = await create_client(self._card, config)
            context = request.params.get(CONTEXT_PARAM)
            reply = request.params.get(REPLY_PARAM)
            if reply is None:
                message = Message(
                    message_id=uuid.uuid4().hex,
                    role=Role.ROLE_USER,
                    parts=[Part(text=text)],
                    context_id=str(context) if context else "",
                )
            else:  # the answer to the remote's task waiting for input: that same task
                message = Message(
                    message_id=uuid.uuid4().hex,
                    role=Role.ROLE_USER,
                    parts=[_part(part) for part in reply["parts"]],
                    task_id=reply["task_id"],
                    context_id=reply["context_id"],
                )
            send = SendMessageRequest(message=message)
            streams = bool(self._card.capabilities.streaming)
            if not streams:  # the task's id at once, then polled: cancellable while it works
                send.configuration.return_immediately = True
            try:
                await _read(client, send, answer, on_chunk)
                if not streams:
                    await follow(client, answer, on_chunk)
            except BaseException:
                await _cancel(client, answer)
                raise

    def _check_card(self, card: Any) -> None:
        """The card's JSON-RPC endpoints are on the server asked: a card naming another
        server would have the token and the conversation sent there."""
        ours = _origin(self.url)
        for interface in card.supported_interfaces:
            if interface.protocol_binding.upper() != "JSONRPC":
                continue
            theirs = _origin(interface.url)
            if theirs != ours:
                raise self._error(
                    f"has an agent card whose endpoint is on another server ({theirs}): refused, "
                    "as the token and the conversation would go there"
                )

    def _response(self, answer: Answer) -> ModelResponse:
        state = answer.state
        if state in FAILED:
            said = shortened(answer.status_text) or "no reason given"
            word = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
            raise self._error(f"ended its task {word}: {said}")
        if state not in (COMPLETED, INPUT_REQUIRED):
            raise self._error(f"stopped before its task finished (its state: {state or 'none'})")
        progress = "\n".join(answer.progress)
        message = AssistantMessage(
            content=answer.text,
            reasoning=shortened(progress, MAX_PROGRESS_CHARS) if progress else None,
        )
        return ModelResponse(
            message=message,
            usage=answer.usage or Usage(),
            raw={
                "task_id": answer.task_id,
                "context_id": answer.context_id,
                "state": state,
                "asked": answer.asked,
            },
            finish_reason="stop" if state == COMPLETED else "input_required",
            model=self.name,
        )

    def _failure(self, exc: Exception, transport: BoundedTransport) -> ModelError:
        if transport.exceeded:
            return self._error(f"sent an answer past {self.max_bytes} bytes")
        import httpx  # noqa: PLC0415

        found: BaseException | None = exc
        while found is not None:  # the SDK wraps the transport's errors in its own
            if isinstance(found, httpx.TimeoutException) or "Timeout" in type(found).__name__:
                return self._error(f"sent nothing for {self.idle_timeout:g} s")
            if isinstance(found, httpx.ConnectError):
                return self._error("could not be reached")
            if isinstance(found, json.JSONDecodeError):  # an answer that is not JSON
                return self._error(f"sent what is not A2A: {shortened(str(found), 300)}")
            found = found.__cause__ or found.__context__
        if isinstance(exc, ValueError) or "Parse" in type(exc).__name__ or "Invalid" in str(exc):
            return self._error(f"sent what is not A2A: {shortened(str(exc), 300)}")
        return self._error(f"failed: {type(exc).__name__}: {shortened(str(exc), 300)}")

    def _error(self, what: str) -> ModelError:
        text = f"remote A2A agent {self._shown} {what}"
        if self._userinfo:  # an HTTP error's text may quote the URL whole
            text = text.replace(self._userinfo, "***")
        return ModelError(text, model=self.name)


async def _read(client: Any, request: Any, answer: Answer, on_chunk: ChunkHandler | None) -> None:
    """Read the answer's events into `answer`, its progress to `on_chunk`.

    The reading is shielded while the remote's task id is unknown: a call given up (its run
    cancelled, past its `timeout`) before the first event naming the task arrived keeps
    reading, for `CANCEL_GRACE` seconds at most and showing nothing more, until that id
    arrives, so that `_cancel` can name the task. Once the id is known a give-up stops the
    reading at once, as any cancellation does."""
    reading = anyio.CancelScope(shield=True)
    given_up = False

    async def watch() -> None:
        nonlocal given_up
        try:
            await anyio.sleep_forever()
        finally:  # the call is given up (or its reading is over: then this changes nothing)
            given_up = True
            if answer.task_id:
                reading.cancel()
            else:
                reading.deadline = anyio.current_time() + CANCEL_GRACE

    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            with reading:
                async with contextlib.aclosing(client.send_message(request)) as events:
                    async for event in events:
                        told = answer.take(event)
                        if given_up:
                            if answer.task_id:  # what the cancellation needs: no more
                                break
                            continue
                        if on_chunk is not None:
                            for progress in told:
                                await on_chunk(ReasoningDelta(progress + "\n"))
        except Exception as exc:  # raised below, outside the watcher's task group
            failure = exc
        group.cancel_scope.cancel()  # the watcher's work is done
    # A give-up from outside was held off by the shield; it is raised here, at the first
    # checkpoint outside it (before a failure of the reading: the caller gave up first).
    await anyio.lowlevel.checkpoint()
    if failure is not None:
        raise failure


async def _cancel(client: Any, answer: Answer) -> None:
    """A call given up (timed out, cancelled, a bad event) cancels the remote's task, when it
    had one and it had not ended: a best effort, shielded, for `CANCEL_GRACE` seconds."""
    if not answer.task_id or answer.state in (COMPLETED, INPUT_REQUIRED) or answer.state in FAILED:
        return
    from a2a.types import CancelTaskRequest  # noqa: PLC0415

    # The call's own error is what the caller reads: the cancellation's is dropped.
    with (
        anyio.CancelScope(shield=True),
        anyio.move_on_after(CANCEL_GRACE),
        contextlib.suppress(Exception),
    ):
        await client.cancel_task(CancelTaskRequest(id=answer.task_id))


def _part(part: Mapping[str, Any]) -> Any:
    """An A2A part from `{"text": str}` or `{"data": JSON}` (a reply's, `REPLY_PARAM`)."""
    from a2a.types import Part  # noqa: PLC0415
    from google.protobuf import struct_pb2  # noqa: PLC0415
    from google.protobuf.json_format import ParseDict  # noqa: PLC0415

    if "text" in part:
        return Part(text=str(part["text"]))
    return Part(data=ParseDict(part["data"], struct_pb2.Value()))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def new_turn(request: ModelRequest) -> str:
    """The text this call sends: the conversation's messages since this agent last answered
    (the user's, and the other agents' text), oldest first."""
    found: list[str] = []
    for message in reversed(request.history):
        role = getattr(message, "role", None)
        if role == "assistant":
            if getattr(message, "name", None) == request.agent and request.agent is not None:
                break
            if message.content:
                found.append(str(message.content))
        elif role == "user":
            found.append(str(message.content))
    if not found:
        raise ModelError(
            f"agent {request.agent!r} has nothing new to send its remote A2A agent",
            model=request.agent,
        )
    return "\n\n".join(reversed(found))
