"""PostgreSQL connections the server closed while they sat idle in the store's pools (a server
restart, an idle timeout of a proxy or of `idle_session_timeout`) are replaced when next taken,
not used: the run's commits on them go through, and no agent call is lost to them.

The store keeps two pools (its own connections, `sql_links.PostgresLink`, on libpq or on
asyncpg, and SQLAlchemy's engine, which `user:` / `app:` writes take); each is emptied here by
`pg_terminate_backend` while a run's tool is under way, between two of its commits.
"""

from __future__ import annotations

from typing import Any

import anyio
import asyncpg
import pytest

from agents import Agent, ScriptedModel, ToolContext, call, tool
from network import Network, ThreadRef
from network.threads import SQLStore

pytestmark = pytest.mark.anyio

OTHERS = (
    "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND backend_type = 'client backend'"
)


async def cut_every_other_connection(url: str) -> None:
    """What a server restart does to the store's idle connections: each is closed by the
    server; returns once they are gone and the event loop has seen their sockets close."""
    admin = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    try:
        assert await admin.fetchval(f"SELECT count(pg_terminate_backend(pid)) {OTHERS}") >= 2
        with anyio.fail_after(10):
            while await admin.fetchval(f"SELECT count(*) {OTHERS}"):
                await anyio.sleep(0.02)
    finally:
        await admin.close()
    await anyio.sleep(0.2)  # the sockets' end of file, read by the event loop


@pytest.mark.parametrize("shared", [False, True], ids=["thread-keys", "user-keys"])
@pytest.mark.parametrize(
    "connect_args",
    [
        pytest.param({}, id="libpq"),
        # an argument libpq has no name for: the store's own connections are asyncpg's
        pytest.param({"server_settings": {"application_name": "lost"}}, id="asyncpg"),
    ],
)
async def test_a_run_commits_past_connections_the_server_closed(
    postgres_url: str, connect_args: dict[str, Any], shared: bool
) -> None:
    @tool
    async def step(n: int, ctx: ToolContext) -> str:
        """Step n."""
        ctx.kv.set("steps", [n])
        if shared:
            ctx.kv.set("user:steps", [n])  # the engine's pool commits it
        if n == 2:
            await cut_every_other_connection(postgres_url)
        return f"step {n}"

    script = [call("step", n=1), call("step", n=2), call("step", n=3)]
    agent = Agent("worker", tools=[step], model=ScriptedModel(script))
    network = Network(
        "lost",
        agents=[agent],
        router=lambda ctx: agent if ctx.call_count < 3 else None,
        state_schema={"steps": {"type": list[int]}, "user:steps": {"type": list[int]}},
    )
    async with SQLStore(postgres_url, connect_args=connect_args) as store:
        thread = f"lost-{'asyncpg' if connect_args else 'libpq'}-{shared}"
        await store.delete_thread(thread)
        await store.delete_user_state("u", app_name="lost")

        # before: ThreadStoreError at the second call's commit (the connection is closed),
        # the second call lost with the run
        result = await network.run("work", thread=ThreadRef(thread, user_id="u", store=store))

        assert len(result.results) == 3
        stored = await store.get_thread(thread)  # the libpq pool's, read after the cut too
        assert stored is not None and stored.revision == 3
        assert stored.state == {"steps": [1, 2, 3]}
        assert stored.user_state == ({"user:steps": [1, 2, 3]} if shared else {})
