"""A new thread created by its run lease's claim, and removed again when the request that
claimed it is refused: PostgreSQL's statements (SQLite runs the same steps in one write
transaction: `SQLiteFast.claim_creating`, `SQLiteFast.drop_created`).

A served run on a new thread used to take two transactions before it ran: the claim (which
found the thread missing) and the thread's creation holding the user's message. Here the
claim's statement does both: when it took the lease and the thread was not in its snapshot,
it inserts the thread's row at revision 1 with its messages and its first checkpoint row, and
reads what a load of the new thread would (its user's and its app's keys). Each part reads
the one before (`FROM c`, `FROM n`): nothing is created unless the lease was taken, and a
thread another transaction created meanwhile is left as it is (`ON CONFLICT DO NOTHING`: then
`created` is false and the caller reads the thread).

The removal deletes the thread's row only while it is at the revision the claim left (nothing
was committed on it since), then its messages and checkpoint (all it holds then), and releases
the lease, in one statement.
"""

from __future__ import annotations


def creating_parts(q: dict[str, str]) -> tuple[str, str]:
    """What the claim's statement (`sql_leases`: CTEs `t`, the thread's owner, and `c`, the
    lease taken) adds to create a thread it finds missing (see the module docstring): its
    CTEs, and its columns (created, then the user's and the app's keys when created).

    Parameters after the claim's nine: $10 to $15 the new row's revision, creation and update
    times, message and call counts, metadata; $16 the run, $17 the messages' texts, $18 the
    checkpoint's keys (JSON)."""
    created = "EXISTS (SELECT 1 FROM n)"
    ctes = (
        f", n AS (INSERT INTO {q['threads']} (thread_id, app_name, user_id, revision,"
        " created_at, updated_at, message_count, result_count, meta)"
        " SELECT $1, $5, $6, $10, $11, $12, $13, $14, $15 FROM c"
        " WHERE NOT EXISTS (SELECT 1 FROM t) ON CONFLICT (thread_id) DO NOTHING"
        " RETURNING thread_id)"
        f", m AS (INSERT INTO {q['messages']} (thread_id, seq, run_id, data)"
        " SELECT $1, x.o - 1, $16, x.d FROM n, unnest($17::text[]) WITH ORDINALITY AS x(d, o))"
        f", k AS (INSERT INTO {q['commits']} (thread_id, revision, calls, results, messages,"
        " summaries, at, run_id, keys, effects)"
        " SELECT $1, $10, 0, 0, $13, NULL, $12, $16, $18, NULL FROM n)"
    )
    columns = (
        f" {created},"
        f' CASE WHEN {created} THEN ARRAY(SELECT ROW(u."key", u.value)'
        f" FROM {q['user_state']} u WHERE u.app_name = $5 AND u.user_id = $6) END,"
        f' CASE WHEN {created} THEN ARRAY(SELECT ROW(a."key", a.value)'
        f" FROM {q['app_state']} a WHERE a.app_name = $5) END,"
    )
    return ctes, columns


def drop_created_sql(leases: str, q: dict[str, str]) -> str:
    """The removal of a thread a claim created (see the module docstring): $1 the thread, $2
    the revision the claim left, $3 the lease's holder; answers whether it was removed."""
    return (
        f"WITH d AS (DELETE FROM {q['threads']} WHERE thread_id = $1 AND revision = $2"
        " RETURNING thread_id),"
        f" m AS (DELETE FROM {q['messages']} WHERE thread_id = $1"
        " AND EXISTS (SELECT 1 FROM d)),"
        f" k AS (DELETE FROM {q['commits']} WHERE thread_id = $1"
        " AND EXISTS (SELECT 1 FROM d)),"
        f" l AS (DELETE FROM {leases} WHERE thread_id = $1 AND holder = $3)"
        " SELECT EXISTS (SELECT 1 FROM d)"
    )
