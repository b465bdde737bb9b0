"""`SQLStore`'s direct driver paths: a run's load and commits, and single statements (the run
leases'), on the store's own connections (`network.threads.sql_links`) rather than through
SQLAlchemy.

Per dialect (`sql_fast_sqlite`, `sql_fast_postgres`): on SQLite a load or a commit is one
transaction run whole on a connection's thread (one hand-off); on PostgreSQL one statement (one
round trip). The rows a load reads go into the store's decoded cache exactly as `_sync` puts
them, so the two paths share it. A commit the direct path leaves (`user:` / `app:` writes; on
PostgreSQL also claims, append-only commits and summaries) returns None here and takes
`CommitWriter`'s transaction instead.

SQLAlchemy's `echo` does not show these statements; `statement_listeners` does.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from network.threads.decoded import DecodedCache
from network.threads.leases import ReadClaim
from network.threads.pending import PendingCall
from network.threads.sql_fast import Encoded, Header, Hint, Loaded, quoted
from network.threads.sql_fast_postgres import PostgresFast, loaded_of, takes_fast_path
from network.threads.sql_fast_sqlite import SQLiteFast
from network.threads.sql_links import PostgresLink, SQLiteLink, postgres_arguments
from network.threads.sql_tables import Tables
from network.threads.thread_data import Thread, decode_value
from network.threads.timeline import commit_keys


class SQLDirect:
    """The direct-driver half of `SQLStore` (a mixin over its engine, tables and cache)."""

    engine: AsyncEngine
    tables: Tables
    dialect: str
    decoded: DecodedCache
    _synchronous: str
    _busy_timeout: float
    _link_size: int
    _connect_args: dict[str, Any]
    _link: SQLiteLink | PostgresLink | None

    @functools.cached_property
    def _fast(self) -> SQLiteFast | PostgresFast:
        """The dialect's statements, with the store's own connections (opened on first use)."""
        preparer = self.engine.dialect.identifier_preparer
        if self.dialect == "sqlite":
            self._link = SQLiteLink(
                self.engine.dialect.create_connect_args(self.engine.url),
                synchronous=self._synchronous,
                busy_timeout=self._busy_timeout,
                size=self._link_size,
            )
            return SQLiteFast(self.tables, preparer)
        arguments = postgres_arguments(self.engine.dialect, self.engine.url, self._connect_args)
        self._link = PostgresLink(arguments, size=self._link_size)
        return PostgresFast(self.tables, preparer, self._link)

    def _sqlite(self) -> SQLiteLink:
        link = self._link
        assert isinstance(link, SQLiteLink)
        return link

    async def _close_link(self) -> None:
        link, self._link = self._link, None
        self.__dict__.pop("_fast", None)
        if link is not None:
            await link.close()

    async def statement(
        self, sqlite: str, postgresql: str, arguments: tuple[Any, ...], *, durable: bool = True
    ) -> list[Any]:
        """The rows of one statement (written for each dialect: `?` or `$1` parameters) run on
        its own on the store's own connections (see `network.threads.sql_links`)."""
        fast = self._fast
        if isinstance(fast, SQLiteFast):
            return await self._sqlite().statement(sqlite, arguments, durable=durable)
        return await fast.link.fetch(postgresql, *arguments)

    @property
    def statement_listeners(self) -> list[Any]:
        """Functions called with the text of each statement the direct paths run (a run's load
        and commits, the run leases); for tests and benchmarks that count them."""
        self._fast  # noqa: B018 (made with its link)
        assert self._link is not None
        return self._link.listeners

    async def _direct_create(self, values: list[Any]) -> None:
        fast = self._fast
        if isinstance(fast, SQLiteFast):
            await self._sqlite().write(fast.create_thread(values))
        else:
            await fast.create_thread(values)

    async def _direct_create_reading(
        self, values: list[Any], first: Encoded | None = None
    ) -> Thread | None:
        """Create the thread (`ThreadExistsError` when the id is taken) with its `first`
        commit (messages only) and read it back: on SQLite one transaction, not synced to disk
        (the thread's first synced commit takes it to the disk), on PostgreSQL one statement."""
        fast = self._fast
        if isinstance(fast, SQLiteFast):
            loaded = await self._sqlite().write(fast.create_reading(values, first), durable=False)
        else:
            loaded = await fast.create_reading(values, first)
        thread = self._thread_of(loaded)
        return thread if thread is not None else await self._direct_load(values[0])

    async def _direct_load(self, thread_id: str) -> Thread | None:
        """The thread, reading only the records committed after those the cache holds."""
        fast = self._fast
        while True:
            hint = self._hint(thread_id)
            if isinstance(fast, SQLiteFast):
                # a thread the process holds: its row, its keys and what was committed since
                work = fast.load(thread_id, hint)
                loaded = await self._sqlite().read(work, brief=hint is not None)
            else:
                loaded = await fast.load(thread_id, hint)
            if loaded is None:
                return None
            thread = self._thread_of(loaded)
            if thread is not None:
                return thread
            # Another reader of this process reset the thread's records meanwhile (a new
            # incarnation): what was read does not continue them; read again.

    def _hint(self, thread_id: str) -> Hint:
        """What the decoded cache holds of the thread (a load reads only what follows)."""
        known = self.decoded.entry(thread_id)
        if known is None:
            return None
        return (known.incarnation, len(known.messages), len(known.results), len(known.summaries))

    async def _direct_claim_reading(
        self, claim: tuple[str, str], arguments: tuple[Any, ...], app: str, user: str
    ) -> ReadClaim:
        """A run lease claimed by `claim` (its SQLite and PostgreSQL texts, `sql_leases`) unless
        the thread is another app's or user's, and the thread read once the lease is taken.

        SQLite: one transaction (one hand-off, not synced to disk: it writes only the lease).
        PostgreSQL: one statement, which reads the thread too when it took the lease where
        there was none: then whoever held it before had released it, after their last commit,
        before this statement's snapshot, so the snapshot holds every commit made under a
        lease. When it took a lease that was still there (expired, or being released as the
        claim waited on its row), the thread is read by a statement of its own, after."""
        fast = self._fast
        thread_id = arguments[0]
        hint = self._hint(thread_id)
        loaded: Loaded | None
        if isinstance(fast, SQLiteFast):
            work = fast.claim_reading(claim[0], arguments, app, user, hint)
            taken, foreign, existed, loaded = await self._sqlite().write(work, durable=False)
        else:
            first = (0, 0, 0) if hint is None else hint[1:]
            rows = await fast.link.fetch(claim[1], *arguments, app, user, *first)
            foreign, taken, existed, leased = rows[0][:4]
            read = taken and existed and not leased
            loaded = loaded_of(rows[0][4:], first, hint) if read else None
        thread = None if loaded is None else self._thread_of(loaded)
        if taken and existed and thread is None:  # read after, or reset meanwhile: read again
            thread = await self._direct_load(thread_id)
        # missing at the claim: the run's session creates it (or reads one made meanwhile)
        return ReadClaim(taken, foreign, existed, thread)

    async def _direct_claim_creating(
        self,
        claim: tuple[str, str],
        arguments: tuple[Any, ...],
        app: str,
        user: str,
        values: list[Any],
        first: Encoded,
    ) -> ReadClaim:
        """`_direct_claim_reading`, and a thread the claim finds missing created (its row
        `values`) holding `first` (a served run's input) once the lease is taken, in the same
        transaction (`sql_new_thread`). A thread another transaction created meanwhile (only
        PostgreSQL's snapshot can miss one) is read after, as it is."""
        fast = self._fast
        thread_id = arguments[0]
        hint = self._hint(thread_id)
        loaded: Loaded | None
        if isinstance(fast, SQLiteFast):
            work = fast.claim_creating(claim[0], arguments, app, user, hint, values, first)
            taken, foreign, existed, loaded, created = await self._sqlite().write(
                work, durable=False
            )
        else:
            header = Header._make([*values, None])._replace(
                revision=first.commit.revision + 1,
                updated_at=first.now,
                message_count=len(first.messages),
            )
            start = (0, 0, 0) if hint is None else hint[1:]
            keys = json.dumps(commit_keys(first.commit))
            rows = await fast.link.fetch(
                claim[1],
                *arguments,
                app,
                user,
                *start,
                *header[3:9],
                first.commit.run_id,
                first.messages,
                keys,
            )
            foreign, taken, existed, leased, created, user_keys, app_keys = rows[0][:7]
            loaded = None
            if created:
                none: dict[str, str] = {}  # a new thread has no keys of its own
                scopes = (none, dict(user_keys), dict(app_keys))
                loaded = Loaded(header, (0, 0, 0), first.messages, scopes=scopes)
            elif taken and existed and not leased:
                loaded = loaded_of(rows[0][7:], start, hint)
        thread = None if loaded is None else self._thread_of(loaded)
        if taken and not created and thread is None:  # read after, or created meanwhile
            thread = await self._direct_load(thread_id)
        existed = existed or (thread is not None and not created)
        return ReadClaim(taken, foreign, existed, thread, created=created)

    async def _direct_drop_created(
        self, release: tuple[str, str], thread_id: str, revision: int, holder: str
    ) -> bool:
        """Remove a thread a claim created, while still at `revision`, and release `holder`'s
        lease by `release` (its SQLite and PostgreSQL texts), in one transaction (not synced
        to disk on SQLite, as its creation was not)."""
        fast = self._fast
        if isinstance(fast, SQLiteFast):
            work = fast.drop_created(thread_id, revision, release[0], holder)
            dropped = await self._sqlite().write(work, durable=False)
        else:
            rows = await fast.link.fetch(release[1], thread_id, revision, holder)
            dropped = bool(rows[0][0])
        if dropped:
            self.decoded.forget(thread_id)
        return dropped

    def _quoted(self) -> dict[str, str]:
        """Every table's name, quoted for the dialect, by its short name."""
        return quoted(self.tables, self.engine.dialect.identifier_preparer)

    def _postgres_load(self, *, first: int) -> str:
        """The PostgreSQL load's statement, its record starts numbered from `$first` on, for a
        statement that embeds it (`sql_leases`)."""
        fast = self._fast
        assert isinstance(fast, PostgresFast)
        return fast.load_from(first)

    def _thread_of(self, loaded: Loaded) -> Thread | None:
        """The `Thread` a load read, its records added to the decoded cache; None when they do
        not continue what the cache now holds."""
        header = loaded.header
        entry = self.decoded.thread(
            header.thread_id, header.incarnation, header.message_count, header.result_count
        )
        m, r, n = loaded.first
        if len(entry.messages) < m or len(entry.results) < r or len(entry.summaries) < n:
            return None
        self.decoded.extend(entry, m, loaded.messages, r, loaded.results, n, loaded.summaries)
        state, user_state, app_state = (
            {key: decode_value(text) for key, text in scope.items()} for scope in loaded.scopes
        )
        return Thread.model_construct(
            thread_id=header.thread_id,
            app_name=header.app_name,
            user_id=header.user_id,
            revision=header.revision,
            created_at=header.created_at,
            updated_at=header.updated_at,
            message_count=header.message_count,
            result_count=header.result_count,
            metadata=json.loads(header.meta),
            messages=entry.conversation(header.message_count),
            results=entry.calls(header.result_count),
            summaries=entry.summaries[: n + len(loaded.summaries)],
            state=state,
            user_state=user_state,
            app_state=app_state,
            pending=[PendingCall.from_text(text) for text in loaded.waiting],
        )

    async def _direct_commit(self, encoded: Encoded) -> tuple[int, ...] | None:
        """Apply the commit directly: the new revision and the sequence numbers its first
        message, call and summary got; None when it is one the direct path leaves."""
        fast = self._fast
        if isinstance(fast, SQLiteFast):
            if encoded.commit.shared:  # merged by the application's handlers, on the loop
                return None
            return await self._sqlite().write(fast.commit(encoded), durable=encoded.commit.synced)
        if not takes_fast_path(encoded):
            return None
        return await fast.commit(encoded)
