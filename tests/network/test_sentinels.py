"""`network.sentinels`: a sentinel shows, pickles and reads back as itself."""

from __future__ import annotations

import pickle
from typing import Any

from network.sentinels import Sentinel


class _Marker(Sentinel):
    __slots__ = ()
    name = "MARKER"


MARKER: Any = _Marker()


def test_a_sentinel_pickles_by_name_and_reads_back_as_the_same_object() -> None:
    assert pickle.loads(pickle.dumps(MARKER)) is MARKER
    assert pickle.loads(pickle.dumps({"key": [MARKER]}))["key"][0] is MARKER
    assert repr(MARKER) == "MARKER"


def test_the_library_sentinels_read_back_as_themselves() -> None:
    from network.sentinels import DELETED
    from routers.graph import END

    for sentinel, name in ((DELETED, "DELETED"), (END, "END")):
        assert isinstance(sentinel, Sentinel) and repr(sentinel) == name
        assert pickle.loads(pickle.dumps(sentinel)) is sentinel


def test_one_removal_marker_serves_branches_durable_records_and_thread_stores() -> None:
    from network.durable import state_writes
    from network.sentinels import DELETED
    from network.state.branch import BranchKV
    from network.state.kv import KV
    from network.threads import DELETED as THREADS_DELETED

    assert THREADS_DELETED is DELETED
    branch = BranchKV(KV())
    branch.set("gone", 1)
    branch.delete("gone")
    assert branch.writes[-1][1] is DELETED  # what a durable step records, as it is
    # A durable record pickled when the marker was defined in `network.durable.state_writes`.
    assert pickle.loads(b"cnetwork.durable.state_writes\nDELETED\n.") is DELETED
    assert state_writes.DELETED is DELETED
