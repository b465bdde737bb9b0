"""A recorded step runs in DBOS's step context, copied from one DBOS made for the execution
(`network.durable.steps.step_context_from`) instead of made anew by DBOS for each step: the
copy has every field DBOS's own snapshot at that number has, and nothing mutable shared with
another step's (two tool calls of one answer run concurrently, each in its own)."""

from __future__ import annotations

from typing import Any

from dbos._context import DBOSContext

from network.durable.steps import snapshot_at, step_context_from


def workflow_context() -> Any:
    """A workflow's context, as DBOS's start of a workflow leaves it (a user, roles)."""
    ctx = DBOSContext()
    ctx.workflow_id = "run-1"
    ctx.function_id = 7
    ctx.owner_xid = "owner-token"
    ctx.authenticated_user = "ada"
    ctx.authenticated_roles = ["admin", "ops"]
    ctx.assumed_role = "ops"
    ctx.workflow_deadline_epoch_ms = 123
    return ctx


def test_a_copied_step_context_is_dboss_snapshot_at_that_number_field_by_field() -> None:
    ctx = workflow_context()
    template = snapshot_at(ctx, 3)
    assert ctx.function_id == 7  # the workflow's counter as it was
    for number in (3, 8, 12):
        copied = step_context_from(template, number)
        made = snapshot_at(ctx, number)
        assert type(copied) is type(made)
        assert vars(copied) == vars(made)
        assert copied.function_id == number
    assert ctx.function_id == 7


def test_no_list_of_a_step_context_is_shared_with_another_step() -> None:
    template = snapshot_at(workflow_context(), 1)
    one, two = step_context_from(template, 2), step_context_from(template, 3)
    lists = [key for key, value in vars(template).items() if isinstance(value, list)]
    assert {"context_spans", "used_datasources", "authenticated_roles"} <= set(lists)
    for key in lists:
        assert getattr(one, key) is not getattr(two, key)
        assert getattr(one, key) is not getattr(template, key)
    one.context_spans.append("span")
    assert two.context_spans == [] and template.context_spans == []
