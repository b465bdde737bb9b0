"""Tools: what a model may call, and running the calls it makes.

Public: `tool` (the `@tool` decorator and `Tool`), `tool_context` (`ToolContext`), `checks`
(`ToolDefinitionWarning`), `client_tool` (tools run by the caller) and `files` (writing a
model's files inside one folder). Everything else is internal (a leading underscore): running
one answer's tool calls (`_dispatch`), holding calls for a person's confirmation
(`_confirmation`), predictive state from tool arguments (`_predictive`), reading docstrings
(`_docstrings`), the text the model reads of a tool's result (`_result_text`) and running a
tool in a worker process (`_isolated`).

Import the public names from `agents`.
"""
