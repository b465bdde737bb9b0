"""`@tool`: turn a plain function into a tool the model can call.

The JSON schema the model sees comes from the function's signature through pydantic (with the
docstring's summary and parameter descriptions, and `Annotated[T, "description"]` or
`Annotated[T, Field(description=...)]`), built once when the tool is defined. Type hints are
resolved once too, so `from __future__ import annotations` costs nothing per call.

Parameters the model never sees:
- one annotated `ToolContext` (network, agent, state, tool_call_id) or `State` (the tool's view
  of the run's state) is injected;
- parameters named in `inputs_from_state` are filled from state; whatever the model sends for
  them is ignored.

Any other argument the model sends that the function does not declare is refused: the schema
says `additionalProperties: false` (as pydantic-ai's and the OpenAI Agents SDK's do), and a
call carrying one is the tool's error result naming it, so the model may call again; running
without it would silently drop what the model meant (a misspelt optional argument).

`outputs_to_state={"state_key": {"source": "field", "handler": fn}}` writes the result to
state: no `source` stores the whole result, a `source` missing from the result skips that
mapping, and a result that is not a dict (or a pydantic model) writes nothing.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from types import UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    TypedDict,
    Union,
    Unpack,
    get_args,
    get_origin,
)

import anyio.to_thread

from agents.tools._docstrings import parse_docstring
from agents.tools._finite import arguments_schema
from agents.tools._isolated import call_by_name, reference
from agents.tools.checks import warn_about_definition
from agents.tools.tool_context import ToolContext
from network.errors import ConfigurationError, ToolError
from network.mappings import mapping_entries
from network.numbers import check_number
from network.run.guardrails import Guardrail, coerce_guardrails
from network.run.retry_policy import RetryPolicy
from network.run.tool_names import check_tool_name
from network.state.schema import CONVERSATION_NAMES, mapped_key_problem
from network.state.state import State
from network.state.values import is_pydantic_model

if TYPE_CHECKING:
    from pydantic import BaseModel

# pydantic is imported by the first `@tool` (it builds the arguments model), not by
# `import agents`: the imports below in functions are that deferral.

_CONTEXT = "context"
_STATE = "state"


class Tool:
    """A callable the model can ask for by name. Build one with `@tool`, which takes the
    options below.

    Args:
        fn: the sync or async function the tool calls.
        name: the name the model calls it by (default: the function's name): 1 to 64
            letters, digits, `_` or `-`, the names model providers accept
            (`network.run.tool_names`; another is a `ConfigurationError`).
        description: what the model reads about it (default: the docstring's summary).
        inputs_from_state: `{state_key: parameter}`: parameters filled from state, hidden from
            the model.
        outputs_to_state: `{state_key: {"source": field, "handler": fn}}`: result fields
            written to state.
        requires_confirmation: the call waits for a person to accept it (AG-UI interrupts).
        blocking: run a sync function in a worker thread instead of on the event loop. Sync
            tools run inline by default: a thread hand-off costs more than most tools take.
            A blocking tool still running when its call times out or its run is cancelled is
            abandoned (Python cannot kill a thread): the run goes on, its writes are dropped.
        timeout: seconds the call may take; past it the model gets an error result and the
            run goes on. Default: the agent's, else the network's `tool_timeout`. A sync tool
            given a timeout runs in a worker thread (as with `blocking=True`).
        isolated: run a sync function in a worker process, killed when the call times out or
            the run is cancelled: for tools that may hang for good. The function must be
            defined at module level, take and return picklable values, and cannot be given a
            `ToolContext` or `State` (see `agents.tools._isolated`).
        retry: a `RetryPolicy` for failed calls (default: the agent's, else the network's
            `tool_retry`). Failures are retried without the model knowing only when the tool
            is `idempotent` or the policy names `retry_on` explicitly; each try's state
            writes are dropped when it fails. `ToolContext.attempt` says which try it is.
        idempotent: calling the tool twice with the same arguments does no more harm than
            once, so transient failures (timeouts, connection errors) may be retried.
        model_retries: how many times per run the tool may `raise Retry("why")` to ask the
            model to call it again; past that the model reads that the tool gives up
            (`error_type` "RetryBudgetExceeded") and the run goes on.
        input_guardrails: checks of a call's arguments before the tool runs
            (`agents.tool_input_guardrail`): a rejection is the call's result the
            model reads, a trip stops the run with stop reason "guardrail".
        output_guardrails: checks of a call's result before the model sees it
            (`tool_output_guardrail`): a rejection replaces it (the call's writes dropped).
        private_errors: the tool's own exceptions are the model's to read, not a client's:
            the model reads the exception as usual, while the call's result as streamed to a
            client (AG-UI's TOOL_CALL_RESULT), shown in the dev UI and sent back in a
            conversation snapshot says only `tool 'x' failed: internal error (reference
            err_...)`, the exception being logged whole under that reference. For tools whose
            exceptions may carry secrets (a connection string, a token). A `ToolError` the
            tool raises is its own message for everyone, as always.
    """

    # `name=` is checked against the names providers accept; a subclass whose name comes from
    # elsewhere (an agent's name, checked by `as_tool` when it is given) turns it off
    checks_name: ClassVar[bool] = True

    __slots__ = (
        "_argument_fields",
        "_call_async",
        "_hidden",
        "_injected",
        "_process_target",
        "_state_inputs",
        "_validate_arguments",
        "args_model",
        "blocking",
        "description",
        "fn",
        "guardrails",
        "idempotent",
        "inline",
        "inputs_from_state",
        "isolated",
        "model_retries",
        "name",
        "outputs_to_state",
        "parameters",
        "private_errors",
        "reads_run",
        "requires_confirmation",
        "retry",
        "schema",
        "timeout",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        inputs_from_state: Mapping[str, str] | None = None,
        outputs_to_state: Mapping[str, Mapping[str, Any]] | None = None,
        requires_confirmation: bool = False,
        blocking: bool = False,
        timeout: float | None = None,
        isolated: bool = False,
        retry: RetryPolicy | None = None,
        idempotent: bool = False,
        model_retries: int = 2,
        input_guardrails: Sequence[Any] = (),
        output_guardrails: Sequence[Any] = (),
        private_errors: bool = False,
    ) -> None:
        if not callable(fn):
            raise ConfigurationError(f"@tool needs a function, got {fn!r}")
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            # called, it would return a generator object, which the model would read as
            # "<generator object ...>" and its body would never run
            raise ConfigurationError(
                f"@tool: {getattr(fn, '__name__', fn)!r} is a generator function (it yields); "
                "a tool returns its result: return a list, or the text"
            )
        self.fn = fn
        if name is not None and self.checks_name:  # a function's own name is an identifier
            function = getattr(fn, "__name__", type(fn).__name__)
            check_tool_name(f"tool of function {function!r}: name", name)
        self.name = name or fn.__name__
        summary, param_docs = parse_docstring(inspect.getdoc(fn))
        if description is not None and not isinstance(description, str):
            # sent as it was, it made every request a provider's 400 ("Invalid type for
            # 'tools[0].function.description'"), while a ScriptedModel took it
            raise ConfigurationError(
                f"tool {self.name!r}: description must be text, got {type(description).__name__}"
            )
        self.description = description if description is not None else summary
        switches = {
            "requires_confirmation": requires_confirmation,
            "blocking": blocking,
            "isolated": isolated,
            "idempotent": idempotent,
            "private_errors": private_errors,
        }
        for option, value in switches.items():  # a truthy "no" would have turned one on
            if type(value) is not bool:
                raise ConfigurationError(
                    f"tool {self.name!r}: {option} must be True or False, got {value!r}"
                )
        self._settle_running(timeout, retry, idempotent, model_retries, blocking, isolated)
        self.guardrails = tool_guardrails(self.name, input_guardrails, output_guardrails)
        self.private_errors = private_errors
        self.inputs_from_state = input_mappings(f"tool {self.name!r}", inputs_from_state)
        self.outputs_to_state = output_mappings(f"tool {self.name!r}", outputs_to_state)
        self.requires_confirmation = requires_confirmation
        fields = self._parameters(param_docs)
        self.parameters = list(fields)
        # parameters the run fills: what the model sends for them is dropped, not refused
        self._hidden = frozenset(self._injected) | frozenset(self._state_inputs)
        # Whether a call reads the run around it: a `ToolContext` or `State` parameter,
        # parameters from state, results written to state. A plain sync tool that does not is
        # called with no `ToolContext` (`invoke_inline(arguments, None)`): one object fewer a
        # call. Decided here, once: the dispatcher reads it on every call.
        self.reads_run = bool(self._injected or self._state_inputs or self.outputs_to_state)
        warn_about_definition(fn, self.name, self.description, self.parameters)
        self._describe(fields)

    def _settle_running(
        self,
        timeout: float | None,
        retry: RetryPolicy | None,
        idempotent: bool,
        model_retries: int,
        blocking: bool,
        isolated: bool,
    ) -> None:
        """How a call runs: its time limit and retries, and where (on the event loop, in a
        worker thread, in a worker process), each option checked."""
        label = self.name
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise ConfigurationError(f"tool {label!r}: retry must be a RetryPolicy, got {retry!r}")
        check_number(f"tool {label!r}: model_retries", model_retries, integer=True)
        check_number(f"tool {label!r}: timeout (seconds)", timeout, above=True, optional=True)
        self.retry, self.idempotent, self.model_retries = retry, idempotent, model_retries
        self.timeout = timeout
        fn = self.fn
        self._call_async = (
            inspect.iscoroutinefunction(fn)
            or inspect.iscoroutinefunction(
                getattr(fn, "__call__", None)  # noqa: B004 - a callable object's async __call__
            )
            # an async function behind a plain `def` decorator (`functools.wraps`): called as a
            # sync tool it returned a coroutine that never ran. A blocking or isolated one is
            # left as written (its wrapper may run the coroutine itself, in its thread).
            or (not blocking and not isolated and inspect.iscoroutinefunction(inspect.unwrap(fn)))
        )
        self.isolated = isolated
        if isolated and (self._call_async or blocking):
            raise ConfigurationError(
                f"tool {label!r}: isolated=True runs a sync function in a worker process; "
                "it cannot be async or blocking=True as well"
            )
        # A sync tool with a time limit runs in a worker thread: code running on the event loop
        # cannot be interrupted, a thread can at least be abandoned.
        self.blocking = not isolated and (
            blocking or (timeout is not None and not self._call_async)
        )
        # A plain sync tool runs right on the event loop: `invoke_inline` spares a coroutine.
        self.inline = not self._call_async and not self.blocking and not isolated
        self._process_target = reference(fn, self.name) if isolated else None

    def _parameters(self, param_docs: Mapping[str, str]) -> dict[str, Any]:
        """The fields of the model's arguments, from the function's signature: parameters
        the run injects (`ToolContext`, `State`) and those read from state are kept out."""
        fn = self.fn
        signature = inspect.signature(fn)
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:  # an annotation naming something not importable
            raise ConfigurationError(
                f"tool {self.name!r}: cannot resolve annotations: {exc}"
            ) from exc
        from_state = {param: key for key, param in self.inputs_from_state.items()}
        for mapped in from_state:
            if mapped not in signature.parameters:
                raise ConfigurationError(
                    f"tool {self.name!r}: inputs_from_state maps state key "
                    f"{from_state[mapped]!r} to parameter {mapped!r}, which the function lacks"
                )
        self._injected: dict[str, str] = {}
        self._state_inputs: dict[str, tuple[str, Any]] = {}
        fields: dict[str, Any] = {}
        for param_name, param in signature.parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ConfigurationError(
                    f"tool {self.name!r}: *args and **kwargs cannot be described to a model"
                )
            annotation = hints.get(param_name, Any)
            injected = _injection(annotation)
            if injected is not None:
                self._injected[param_name] = injected
            elif param_name in from_state:
                self._state_inputs[param_name] = (from_state[param_name], param.default)
            else:
                fields[param_name] = _field(annotation, param, param_docs.get(param_name))
        if self.isolated and self._injected:
            raise ConfigurationError(
                f"tool {self.name!r}: an isolated tool runs in another process and cannot be "
                "given a ToolContext or State; return values and use outputs_to_state"
            )
        return fields

    def _describe(self, fields: dict[str, Any]) -> None:
        """The arguments' model and validator, and the schema the model is offered."""
        from pydantic import ConfigDict, create_model  # noqa: PLC0415 (pydantic: see the top)

        self.args_model: type[BaseModel] = create_model(
            f"{_camel(self.name)}Arguments",
            __config__=ConfigDict(
                extra="forbid", arbitrary_types_allowed=True, allow_inf_nan=False
            ),
            **fields,
        )
        validator, self._validate_arguments = _arguments_validator(self.args_model)
        # `_arguments` validates through it directly, unless a subclass has its own `validate`
        self._argument_fields: Any = validator if type(self).validate is Tool.validate else None
        parameters = _strip_titles(self.args_model.model_json_schema())
        parameters.setdefault("properties", {})
        self.schema: dict[str, Any] = {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly."""
        return self.fn(*args, **kwargs)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """The model's arguments validated and coerced, or `ToolError` saying what is wrong."""
        arguments = arguments_object(self.name, arguments)
        if self._hidden and not self._hidden.isdisjoint(arguments):
            arguments = {k: v for k, v in arguments.items() if k not in self._hidden}
        try:
            validated = self._validate_arguments(arguments)
        except sys.modules["pydantic_core"].ValidationError as exc:  # loaded by the definition
            raise self._invalid(exc) from exc
        return validated

    def _invalid(self, exc: Any) -> ToolError:
        """The `ToolError` of arguments pydantic refused (`exc`), naming each problem; an
        argument the tool does not declare is named with those it does, for the model's retry."""
        problems, unknown = [], False
        for error in exc.errors(include_url=False):
            where = ".".join(str(part) for part in error["loc"]) or "arguments"
            if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
                unknown = True
                problems.append(f"{where}: not an argument of this tool")
            else:
                problems.append(f"{where}: {error['msg']}")
        text = "; ".join(problems)
        if unknown:
            text += f" (its arguments: {', '.join(self.parameters) or 'none'})"
        return ToolError(f"tool {self.name!r}: invalid arguments: {text}", tool=self.name)

    async def invoke(self, arguments: Any, context: ToolContext) -> Any:
        """Validate `arguments`, inject context and state inputs, run it, write its outputs."""
        if self.inline:
            return self.invoke_inline(arguments, context)
        if self._call_async:
            result = self.fn(**self._arguments(arguments, context))
            if inspect.isawaitable(result):  # not when a sync decorator hides the async one
                result = await result
        elif self._process_target is not None:
            module, qualname = self._process_target
            kwargs = self._arguments(arguments, context)
            import anyio.to_process  # noqa: PLC0415 (~100 ms: only isolated tools load it)

            result = await anyio.to_process.run_sync(
                call_by_name, module, qualname, kwargs, cancellable=True
            )
        else:
            result = await self._invoke_in_thread(arguments, context)
        if self.outputs_to_state:
            self._write_outputs(result, context.state.kv)
        return result

    async def _invoke_in_thread(self, arguments: Any, context: ToolContext) -> Any:
        """Run a blocking tool in a worker thread that a cancellation abandons.

        Python cannot stop a thread, so when the call times out or the run is cancelled (the
        client left) the run goes on at once and the thread finishes on its own, or never.
        It writes to a staged view of the state, committed only when it returns in time, so
        an abandoned thread can never change the state behind the run's back.
        """
        staged = context.state.for_tool()
        own = ToolContext(
            context.network,
            context.agent,
            staged,
            context.tool_call_id,
            context.run,
            context.attempt,
            context.max_attempts,
        )
        kwargs = self._arguments(arguments, own)
        call = functools.partial(self.fn, **kwargs)
        result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        if staged.kv is not context.state.kv:
            staged.kv.commit()  # type: ignore[attr-defined]
        return result

    def invoke_inline(self, arguments: Any, context: ToolContext | None) -> Any:
        """`invoke` for a plain sync tool (`inline`), called without a coroutine; `context`
        may be None for a tool that does not read the run (`reads_run`)."""
        result = self.fn(**self._arguments(arguments, context))
        if self.outputs_to_state:
            assert context is not None, "a tool that writes to state reads the run (reads_run)"
            self._write_outputs(result, context.state.kv)
        return result

    def _arguments(self, arguments: Any, context: ToolContext | None) -> dict[str, Any]:
        """The keyword arguments of one call: validated, plus injected and state parameters
        (`context` is read only for those: None for a tool that has none)."""
        fields = self._argument_fields
        if fields is not None and type(arguments) is dict:
            if self._hidden and not self._hidden.isdisjoint(arguments):
                arguments = {k: v for k, v in arguments.items() if k not in self._hidden}
            # `validate` written out, without its two Python calls: every tool call runs this.
            try:
                kwargs: dict[str, Any] = fields.validate_python(arguments)[
                    0
                ]  # (values, extra, fields set)
            except sys.modules["pydantic_core"].ValidationError as exc:
                raise self._invalid(exc) from exc
        else:
            kwargs = self.validate(arguments)
        if self._injected or self._state_inputs:  # parameters the run fills (`reads_run`)
            assert context is not None, "a tool with such parameters reads the run"
            if self._injected:
                for param, kind in self._injected.items():
                    kwargs[param] = context if kind == _CONTEXT else context.state
            if self._state_inputs:
                kv = context.state.kv
                for param, (key, default) in self._state_inputs.items():
                    if kv.has(key):
                        kwargs[param] = kv.get(key)
                    elif default is not inspect.Parameter.empty:
                        kwargs[param] = default
                    else:
                        raise ToolError(
                            f"tool {self.name!r}: parameter {param!r} comes from state key "
                            f"{key!r}, which has no value",
                            tool=self.name,
                        )
        return kwargs

    def _write_outputs(self, result: Any, kv: Any) -> None:
        if is_pydantic_model(result):
            result = result.model_dump()
        if not isinstance(result, dict):
            return
        for key, mapping in self.outputs_to_state.items():
            source = mapping.get("source")
            if source is None:
                value = result
            elif source in result:
                value = result[source]
            else:
                continue
            kv.set(key, value, mapping.get("handler"))

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def arguments_object(tool: str, arguments: Any) -> dict[str, Any]:
    """A call's arguments as the dict a tool validates: a dict as it is, and a JSON object
    still in its text (a `Model` of the application's own, or a script, may give
    `ToolCall.arguments` unparsed) parsed; anything else is `not_an_object`'s `ToolError`."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    raise not_an_object(tool, arguments)


def not_an_object(tool: str, arguments: Any) -> ToolError:
    """The error a tool reports to the model when its arguments are not a JSON object."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
            return ToolError(
                f"tool {tool!r}: arguments are not valid JSON: {arguments[:200]!r}", tool=tool
            )
    # JSON, but not an object (a list, a number): say which, so the model can correct it
    kind = _JSON_KINDS.get(type(arguments), type(arguments).__name__)
    return ToolError(f"tool {tool!r}: arguments must be a JSON object, got {kind}", tool=tool)


_JSON_KINDS = {
    list: "a JSON array",
    str: "a JSON string",
    int: "a JSON number",
    float: "a JSON number",
    bool: "a JSON boolean",
    type(None): "null",
}


def input_mappings(where: str, given: Any) -> dict[str, str]:
    """`inputs_from_state` checked: `{state_key: parameter}`, names as non-empty strings and
    each parameter filled from one key only; `where` names the tool ("tool 'x'")."""
    option = f"{where}: inputs_from_state"
    seen: dict[str, str] = {}

    def entry(key: Any, param: Any) -> str:
        if not isinstance(key, str) or not key:
            raise ConfigurationError(f"{option}: state key {key!r} must be a non-empty string")
        problem = mapped_key_problem(key)
        if problem is not None:  # it never has a value: the parameter's default, silently
            hint = (
                " (a tool reads the conversation through a State or ToolContext parameter: "
                "ctx.state.messages)"
                if key in CONVERSATION_NAMES
                else ""
            )
            raise ConfigurationError(f"{option}[{key!r}]: {problem}{hint}")
        if not isinstance(param, str) or not param:
            raise ConfigurationError(
                f"{option}[{key!r}] must name a parameter (a non-empty string), got {param!r}"
            )
        if param in seen:
            raise ConfigurationError(
                f"{option} fills parameter {param!r} from both {seen[param]!r} and {key!r}"
            )
        seen[param] = key
        return param

    return mapping_entries(given, lambda: f"{option} must map state keys to parameters", entry)


def output_mappings(where: str, given: Any) -> dict[str, dict[str, Any]]:
    """`outputs_to_state` checked (each mapping as `check_output_mapping` says) and copied;
    `where` names the tool ("tool 'x'")."""
    option = f"{where}: outputs_to_state"
    return mapping_entries(
        given,
        lambda: f"{option} must map state keys to {{'source': ..., 'handler': ...}}",
        functools.partial(output_entry, option),
    )


def output_entry(where: str, key: Any, mapping: Any) -> dict[str, Any]:
    """One `outputs_to_state` entry checked and copied; `where` names the option."""
    if not isinstance(key, str) or not key:
        raise ConfigurationError(f"{where}: state key {key!r} must be a non-empty string")
    problem = mapped_key_problem(key)
    if problem is not None:  # every write to it would be refused: refused here instead
        raise ConfigurationError(f"{where}[{key!r}]: {problem}")
    if not isinstance(mapping, Mapping):
        raise ConfigurationError(
            f"{where}[{key!r}] must be a dict {{'source': ..., 'handler': ...}}, "
            f"got {type(mapping).__name__}"
        )
    check_output_mapping(f"{where}[{key!r}]", mapping)
    return dict(mapping)


def check_output_mapping(where: str, mapping: Mapping[str, Any]) -> None:
    """`ConfigurationError` unless `mapping` is `{"source": ..., "handler": ...}` (both
    optional, the handler callable); `where` names it ("tool 'x': outputs_to_state['k']")."""
    unknown = set(mapping) - {"source", "handler"}
    if unknown:
        raise ConfigurationError(f"{where} has unknown fields {sorted(unknown)}")
    source = mapping.get("source")
    if source is not None and (not isinstance(source, str) or not source):
        # a result's field is named by a non-empty string: anything else never matches, and the
        # mapping would silently never write
        raise ConfigurationError(
            f"{where} source must be the name of a result field (a non-empty string), "
            f"got {source!r}"
        )
    handler = mapping.get("handler")
    if handler is not None and not callable(handler):
        raise ConfigurationError(f"{where} handler is not callable")


def tool(fn: Callable[..., Any] | None = None, **options: Unpack[ToolOptions]) -> Any:
    """Make a tool of a sync or async function: `@tool` or `@tool(name=..., ...)`.

    The options are `Tool`'s (each one is described there): `name`, `description`,
    `inputs_from_state`, `outputs_to_state`, `requires_confirmation`, `blocking`, `timeout`,
    `isolated`, `retry`, `idempotent`, `model_retries`, `input_guardrails`,
    `output_guardrails`, `private_errors`.
    """

    def wrap(function: Callable[..., Any]) -> Tool:
        return Tool(function, **options)

    return wrap(fn) if fn is not None else wrap


class ToolOptions(TypedDict, total=False):
    """The options `@tool(...)` takes: those of `Tool`."""

    name: str | None
    description: str | None
    inputs_from_state: Mapping[str, str] | None
    outputs_to_state: Mapping[str, Mapping[str, Any]] | None
    requires_confirmation: bool
    blocking: bool
    timeout: float | None
    isolated: bool
    retry: RetryPolicy | None
    idempotent: bool
    model_retries: int
    input_guardrails: Sequence[Any]
    output_guardrails: Sequence[Any]
    private_errors: bool


def _injection(annotation: Any) -> str | None:
    """ "context" or "state" when the parameter asks for one (also `ToolContext | None`)."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    candidates = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else ()
    for candidate in (annotation, *candidates):
        if candidate is ToolContext or get_origin(candidate) is ToolContext:
            return _CONTEXT
        if candidate is State:
            return _STATE
    return None


def _field(annotation: Any, param: inspect.Parameter, doc: str | None) -> tuple[Any, Any]:
    """A pydantic field for one parameter; plain strings in `Annotated` become descriptions."""
    from pydantic import Field  # noqa: PLC0415 (pydantic: see the top)
    from pydantic.fields import FieldInfo  # noqa: PLC0415 (pydantic: see the top)

    description = doc
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        strings = [m for m in metadata if isinstance(m, str)]
        if strings:
            description = strings[0]
            kept = [m for m in metadata if not isinstance(m, str)]
            annotation = Annotated[base, *kept] if kept else base
        for meta in metadata:
            if isinstance(meta, FieldInfo) and meta.description:
                description = meta.description
    default = ... if param.default is inspect.Parameter.empty else param.default
    if isinstance(default, FieldInfo):
        return (annotation, default)
    return (annotation, Field(default, description=description))


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated `title`s: they cost tokens and tell the model nothing."""
    if isinstance(schema, dict):
        return {
            key: _strip_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    return schema


def _arguments_validator(
    model: type[BaseModel],
) -> tuple[Any, Callable[[Any], dict[str, Any]]]:
    """What validates a call's arguments into the keyword arguments dict, raising
    `ValidationError`: the validator of the arguments model's fields (None when there is
    none; see below), and a function doing the whole job.

    It validates the arguments model's fields alone: building and discarding a model instance
    per call costs about as much again as the validation itself (a recursive argument
    model's definitions kept beside them). NaN and infinity are refused in every argument
    (`agents.tools._finite`).
    """
    from pydantic_core import SchemaValidator  # noqa: PLC0415 (pydantic: see the top)

    # NaN and infinity refused wherever a number may sit, decided here once (`_finite`)
    schema, config, of_fields = arguments_schema(model.__pydantic_core_schema__)
    if of_fields:
        fields = SchemaValidator(schema, config)
        return fields, lambda arguments: fields.validate_python(arguments)[0]  # (values, ...)
    validator = SchemaValidator(schema, config)
    return None, lambda arguments: validator.validate_python(arguments).__dict__


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_")) or "Tool"


def tool_guardrails(
    name: str, inputs: Sequence[Any], outputs: Sequence[Any]
) -> tuple[tuple[Guardrail, ...], tuple[Guardrail, ...]] | None:
    """A tool's guardrails (on its arguments, on its result), or None when it has none: the
    dispatch reads one attribute to know."""
    checks = (
        coerce_guardrails(f"tool {name!r}", "tool_input", inputs),
        coerce_guardrails(f"tool {name!r}", "tool_output", outputs),
    )
    return checks if checks[0] or checks[1] else None
