"""agent-network: compose teams of LLM agents in code.

The foundation package: `Network` and its run loop, `State` (typed kv + history), messages,
results, events and errors. Agents and tools live in `agents`, ready routers in `routers`.
"""

from network.errors import (
    AgentNetworkError,
    AgentNetworkWarning,
    BudgetExceeded,
    ConfigurationError,
    EmbeddingError,
    GuardrailTripped,
    InvalidIdError,
    InvalidMemoryError,
    LeaseLostError,
    MaxStepsExceeded,
    MemoryDatabaseError,
    MemoryStoreError,
    MessageError,
    ModelError,
    OutputValidationError,
    ParallelWriteWarning,
    Retry,
    RoutingError,
    RunStopped,
    StaleThreadError,
    StateConflictError,
    StateError,
    StateValidationError,
    TemplateError,
    ThreadError,
    ThreadStoreError,
    ToolError,
    ToolStateWarning,
    UnpricedModelWarning,
    UnstorableValueError,
)
from network.history.handoffs import HandoffRecord
from network.history.log import RecordLog
from network.history.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    message_list_adapter,
)
from network.history.results import InferenceResult, ModelCall, ToolCallRecord, Usage
from network.history.view import HistoryView
from network.history.writes import StateWrite
from network.network import Network
from network.run.agent_call import AgentCall, ToolUse
from network.run.budgets.ledger import BudgetFigures
from network.run.budgets.shared import SharedBudget
from network.run.capability import Capability
from network.run.client_results import ClientToolError
from network.run.context import RunContext
from network.run.guardrails import GuardrailResult
from network.run.inputs import Resume, ToolResults
from network.run.interrupts import AlreadyAnsweredError, Answer, Interrupt, InterruptError
from network.run.limits import LimitExceeded, UsageFigures, UsageLimits
from network.run.parallel import BranchFailure, Parallel
from network.run.resources import Resources
from network.run.result import RunResult, Stop, StopReason
from network.run.retry_policy import RetryPolicy
from network.run.thread_ref import ThreadRef
from network.state.handlers import merge_dicts, merge_lists, replace_values
from network.state.kv import KV
from network.state.provenance import Writer, WriteRecord
from network.state.schema import StateSchema
from network.state.state import State
from network.telemetry.options import Telemetry

__all__ = [
    "KV",
    "AgentCall",
    "AgentNetworkError",
    "AgentNetworkWarning",
    "AlreadyAnsweredError",
    "Answer",
    "AssistantMessage",
    "BranchFailure",
    "BudgetExceeded",
    "BudgetFigures",
    "Capability",
    "ClientToolError",
    "ConfigurationError",
    "EmbeddingError",
    "GuardrailResult",
    "GuardrailTripped",
    "HandoffRecord",
    "HistoryView",
    "InferenceResult",
    "Interrupt",
    "InterruptError",
    "InvalidIdError",
    "InvalidMemoryError",
    "LeaseLostError",
    "LimitExceeded",
    "MaxStepsExceeded",
    "MemoryDatabaseError",
    "MemoryStoreError",
    "Message",
    "MessageError",
    "ModelCall",
    "ModelError",
    "Network",
    "OutputValidationError",
    "Parallel",
    "ParallelWriteWarning",
    "RecordLog",
    "Resources",
    "Resume",
    "Retry",
    "RetryPolicy",
    "RoutingError",
    "RunContext",
    "RunResult",
    "RunStopped",
    "SharedBudget",
    "StaleThreadError",
    "State",
    "StateConflictError",
    "StateError",
    "StateSchema",
    "StateValidationError",
    "StateWrite",
    "Stop",
    "StopReason",
    "SystemMessage",
    "Telemetry",
    "TemplateError",
    "ThreadError",
    "ThreadRef",
    "ThreadStoreError",
    "ToolCall",
    "ToolCallRecord",
    "ToolError",
    "ToolMessage",
    "ToolResults",
    "ToolStateWarning",
    "ToolUse",
    "UnpricedModelWarning",
    "UnstorableValueError",
    "Usage",
    "UsageFigures",
    "UsageLimits",
    "UserMessage",
    "WriteRecord",
    "Writer",
    "merge_dicts",
    "merge_lists",
    "message_list_adapter",
    "replace_values",
]
