"""AG-UI messages (`ag_ui.core`) to the network's own messages.

The client owns the conversation in AG-UI: every request carries all of it, including the
assistant messages and tool results it rebuilt from earlier runs' events. They become the
run's conversation; the text of the last user message is the run's input. Activity messages
are display-only and are left out, and so are a sub-run's messages (those whose
`subagentRunId` names a sub-run: an agent or a network used as a tool streamed them; the
caller's conversation holds only the tool call and its result). A handoff's target's
messages are attributed to it too, and stay: they are the run's own conversation. A reasoning
message (a reasoning model's thinking, as AG-UI 1.0's REASONING_* events built it) is kept on
the assistant message it led to, the next one (`AssistantMessage.reasoning`), else the one
before it; one with no answer at all stays in the conversation as an assistant message
holding only reasoning, which is never sent to a model.

The network's messages are text: a user message's text parts are its content, and each other
part (an image, audio, video or document a client attached, as CopilotKit's chat does) becomes
a line saying it was not read, so the model knows something was sent that it cannot see
(dropping it silently would have the model answer as if it had seen it). The capabilities
answer says so (`multimodal.input` all false).

A client never writes a model's instructions: a `system` or `developer` message is refused
(422 `role_not_allowed`, the default) or, with `app(network, system_messages="as_user")`,
passed on as a user message holding its text. Tool results are checked against the thread's
record by `network.agui.tool_results`.
"""

from __future__ import annotations

import json
from typing import Any

from network.history.messages import (
    AssistantMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from network.run.subrun import is_subrun_id
from network.serving.errors import RequestError

SYSTEM_MESSAGE_POLICIES = ("refuse", "as_user")


def text_of(content: Any) -> str:
    """Plain text of a message's content: a string, or a part list's text parts, each other
    part (an image, audio, video, a document) as a line saying it was not read."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        text = getattr(part, "text", None)
        parts.append(text if isinstance(text, str) else unread(part))
    return "\n".join(parts)


def unread(part: Any) -> str:
    """The line standing for a part the model is not given: its kind and media type only,
    so the model can say it did not see it rather than answer as if it had."""
    kind = str(getattr(part, "type", None) or "attachment")
    mime = getattr(getattr(part, "source", None), "mime_type", None)
    what = f"{kind} ({mime})" if isinstance(mime, str) and mime else kind
    return f"[{what} attachment not read: this server passes text only]"


def _arguments(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit
        return text  # kept as sent: a tool given it fails with an error the model sees


def convert(messages: list[Any], system_messages: str = "refuse") -> list[Any]:
    """The network's messages for a list of AG-UI messages.

    `system_messages`: "refuse" (a `system` / `developer` message is a 422 naming it) or
    "as_user" (its text becomes a user message).
    """
    out: list[Any] = []
    thinking: list[str] = []  # reasoning messages waiting for the answer they led to
    for message in messages:
        if is_subrun_id(getattr(message, "subagent_run_id", None)):
            continue  # a sub-run's own work, shown to the user; not this run's conversation
        role = message.role
        if role == "reasoning":
            thinking.append(text_of(message.content))
            continue
        if role == "user":
            out.append(
                UserMessage(content=text_of(message.content), id=message.id, name=message.name)
            )
        elif role == "assistant":
            calls = [
                ToolCall(
                    id=call.id,
                    name=call.function.name,
                    arguments=_arguments(call.function.arguments),
                )
                for call in message.tool_calls or ()
            ]
            out.append(
                AssistantMessage(
                    content=message.content or None,
                    tool_calls=calls,
                    id=message.id,
                    name=message.name,
                    reasoning="\n".join(thinking) or None,
                )
            )
            thinking = []
        elif role == "tool":
            out.append(
                ToolMessage(
                    tool_call_id=message.tool_call_id,
                    content=text_of(message.content),
                    is_error=message.error is not None,
                    id=message.id,
                )
            )
        elif role in ("system", "developer"):
            if system_messages != "as_user":
                raise RequestError(
                    422,
                    "role_not_allowed",
                    f"message {message.id!r} has role {role!r}: a client cannot send "
                    "instructions to the model (send it as a user message, or start the server "
                    'with system_messages="as_user")',
                )
            out.append(UserMessage(content=text_of(message.content), id=message.id))
    if thinking:
        _keep_reasoning(out, "\n".join(thinking))
    return out


def _keep_reasoning(out: list[Any], text: str) -> None:
    """Reasoning that no answer followed: on the last answer, else on its own."""
    for message in reversed(out):
        if isinstance(message, AssistantMessage):
            message.reasoning = f"{message.reasoning}\n{text}" if message.reasoning else text
            return
    out.append(AssistantMessage(reasoning=text))
