"""`network.durable.connections` plans a statement once per connection on PostgreSQL: its
prepared statements run on their generic plan from the first run, where PostgreSQL's default
plans each of a prepared statement's first five runs anew (a run's once-a-run statements never
get past them on one of a worker's connections); the blocking connections (the claim's, the
takeover's, the listener's) too."""

from __future__ import annotations

import pytest
from dbos import DBOSClient

from network.durable.connections import Connections

pytestmark = pytest.mark.anyio
on_postgres = pytest.mark.parametrize("durable_db", ["postgres"], indirect=True)

PLANS = (
    "SELECT coalesce(sum(custom_plans), 0)::int, coalesce(sum(generic_plans), 0)::int "
    "FROM pg_prepared_statements WHERE statement LIKE %(like)s"
)


@on_postgres
async def test_a_statement_is_planned_once_per_connection(client: DBOSClient) -> None:
    db = Connections(client._sys_db)
    status = db.table("workflow_status")
    lookup = f"SELECT status FROM {status} WHERE workflow_uuid = %(id)s FOR NO KEY UPDATE"
    for n in range(7):  # one after another: each on the loop's one idle connection
        assert await db.execute_async(lookup, {"id": f"run_{n}"}) == []
    # PostgreSQL's default: (5, 2), five custom plans (one a run), then the generic one
    assert await db.execute_async(PLANS, {"like": "%FOR NO KEY UPDATE"}) == [(0, 7)]
    db.close()


@on_postgres
def test_the_blocking_connections_plan_once_too(client: DBOSClient) -> None:
    db = Connections(client._sys_db)
    assert db.execute("SHOW plan_cache_mode", {}) == [("force_generic_plan",)]
    listener = db.connect()
    try:
        assert listener.execute("SHOW plan_cache_mode").fetchall() == [("force_generic_plan",)]
    finally:
        listener.close()
    db.close()
