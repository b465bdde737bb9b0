"""Spending across runs: what ties a run's usage and limits to the runs around it.

One concern, in its own modules, so that it can be plugged into the agent step's stages as
one capability:

- `caller`: the run whose code is running now. A run started inside it (from a tool, a hook,
  a router, an instructions function: `await other.run(...)`) is its sub-run for spending:
  its requests and tool calls count in the caller's usage and usage limits.
- `shared`: `SharedBudget`, a budget shared by runs and processes on the thread store.
- `ledger`: the `Ledger` protocol its figures are kept through, and the one rule of a
  reservation (`refusal`); `memory_ledger`: the ledger in the process.
- `account`: a run's account on a shared budget: reserve before a model request, settle
  after, release on failure (`network.capabilities.budgets.metered` calls it around each request).

The usage limits of one run are `network.run.limits`; the sub-run's budget, which reports to
its parent, is `network.run.subrun`; the SQL ledger and the opening of a run's accounts on
their stores are `network.threads.sql_ledger` and `network.threads.ledgers`.
"""
