"""Spending across runs: what ties a run's usage and limits to the runs around it.

One concern, in its own modules, so that it can be plugged into the agent step's stages as
one capability:

- `caller`: the run whose code is running now. A run started inside it (from a tool, a hook,
  a router, an instructions function: `await other.run(...)`) is its sub-run for spending:
  its requests and tool calls count in the caller's usage and usage limits.

The usage limits of one run are `network.run.limits`; the sub-run's budget, which reports to
its parent, is `network.run.subrun`.
"""
