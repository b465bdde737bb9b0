"""`shown_url`: a store's URL as errors and reprs show it, the password as `***`; and the
reprs of what carries such a URL (docs/threads.md: "errors and reprs show a URL's password
as `***`")."""

from __future__ import annotations

from network import ThreadRef
from network.redacted import shown_url
from network.threads import MemoryStore, SQLStore


def test_the_password_is_masked_and_nothing_else() -> None:
    assert shown_url("postgresql://app:s3cret@db/app") == "postgresql://app:***@db/app"
    assert shown_url("postgresql://app:p@ss:w@rd@db/app") == "postgresql://app:***@db/app"
    assert shown_url("postgresql://app@db/app") == "postgresql://app@db/app"  # no password
    assert shown_url("data/threads.db") == "data/threads.db"  # a path


def test_a_thread_ref_and_a_store_print_no_password() -> None:
    # the dataclass's own repr printed the store URL whole, password and all
    ref = ThreadRef("t1", user_id="ann", store="postgresql://app:s3cret@db/app")
    assert "s3cret" not in repr(ref) and "app:***@db" in repr(ref)
    assert repr(ref).startswith("ThreadRef(id='t1', user_id='ann', app_name=None, store=")
    assert ref == ThreadRef("t1", user_id="ann", store="postgresql://app:s3cret@db/app")
    store = SQLStore("postgresql://app:s3cret@db/app")  # opens nothing until used
    assert repr(store) == "SQLStore('postgresql+asyncpg://app:***@db/app')"
    memory = MemoryStore()
    assert repr(ThreadRef("t2", store=memory)).endswith(f"store={memory!r})")
