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
    from network.durable.state_writes import DELETED
    from network.threads.thread_data import DELETED as SHARED_DELETED
    from routers.graph import END

    for sentinel, name in ((DELETED, "DELETED"), (SHARED_DELETED, "DELETED"), (END, "END")):
        assert isinstance(sentinel, Sentinel) and repr(sentinel) == name
        assert pickle.loads(pickle.dumps(sentinel)) is sentinel
