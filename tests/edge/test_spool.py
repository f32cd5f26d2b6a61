"""The edge's SQLite spool: the bound, replay ranges, and seq numbering that survives a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from floorman.core.events import decode_event
from floorman.edge.bus import MAX_REPLAY_EVENTS, PublisherKey, ReplayRequest
from floorman.edge.publisher import EventPublisher
from floorman.edge.spool import Spool
from tests.edge.helpers import KEY, LOOPBACK, tap

OTHER = PublisherKey("t1", "cam1")


def fill(spool: Spool, key: PublisherKey, *, count: int) -> None:
    for seq in range(count):
        spool.append(key, seq=seq, payload=f"payload {seq}".encode())


def test_the_bound_keeps_the_newest_events_and_counts_the_dropped() -> None:
    spool = Spool(max_events=10)
    fill(spool, KEY, count=25)
    fill(spool, OTHER, count=5)
    assert spool.bounds(KEY) == (15, 24)
    assert spool.bounds(OTHER) == (0, 4)
    assert spool.stats.dropped == 15
    assert spool.stats.appended == 30
    assert [r.seq for r in spool.read(KEY, first_seq=0, last_seq=100, limit=100)] == list(range(15, 25))


@pytest.mark.parametrize(("first", "last", "limit", "expected"), [
    (3, 6, 100, [3, 4, 5, 6]),
    (0, 0, 100, [0]),
    (8, 30, 100, [8, 9]),
    (12, 30, 100, []),
    (0, 9, 3, [0, 1, 2]),
])
def test_read_ranges(first: int, last: int, limit: int, expected: list[int]) -> None:
    spool = Spool()
    fill(spool, KEY, count=10)
    rows = spool.read(KEY, first_seq=first, last_seq=last, limit=limit)
    assert [r.seq for r in rows] == expected
    assert [r.payload for r in rows] == [f"payload {s}".encode() for s in expected]


def test_bad_arguments_say_what_was_expected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="expected max_events >= 1, got 0"):
        Spool(max_events=0)
    with pytest.raises(ValueError, match="expected first_seq <= last_seq, got 5 > 2"):
        Spool().read(KEY, first_seq=5, last_seq=2, limit=10)
    with pytest.raises(Exception, match="cannot open the spool database"):
        Spool(tmp_path / "missing" / "spool.sqlite")


def test_publisher_numbering_goes_on_from_the_spool_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "spool.sqlite"
    spool = Spool(path)
    with EventPublisher(KEY, broker="tcp://127.0.0.1:9", replay=LOOPBACK, spool=spool,
                        heartbeat_interval=60) as publisher:
        numbered = [publisher.publish(tap(frame)).seq for frame in range(5)]
    spool.close()
    reopened = Spool(path)
    with EventPublisher(KEY, broker="tcp://127.0.0.1:9", replay=LOOPBACK, spool=reopened,
                        heartbeat_interval=60) as publisher:
        assert publisher.publish(tap(5)).seq == numbered[-1] + 2  # a heartbeat goes out first at each start
        response = publisher.replay(ReplayRequest(request_id=1, table_id="t1", camera_id="cam0", first_seq=2,
                                                  last_seq=4))
    reopened.close()
    assert numbered == [1, 2, 3, 4, 5]  # seq 0 is the first heartbeat
    assert [(e.seq, e.frame) for e in response.events] == [(2, 1), (3, 2), (4, 3)]
    assert response.request_id == 1
    assert (response.oldest_seq, response.newest_seq) == (0, 7)


def test_a_replay_answer_is_capped_and_refuses_another_publisher() -> None:
    spool = Spool()
    for seq in range(MAX_REPLAY_EVENTS + 5):
        spool.append(KEY, seq=seq, payload=tap(seq).model_copy(update={"seq": seq}).model_dump_json().encode())
    publisher = EventPublisher(KEY, broker="tcp://127.0.0.1:9", replay=LOOPBACK, spool=spool)
    capped = publisher.replay(ReplayRequest(request_id=2, table_id="t1", camera_id="cam0", first_seq=0,
                                            last_seq=10**6))
    other = publisher.replay(ReplayRequest(request_id=3, table_id="t1", camera_id="cam1", first_seq=0, last_seq=5))
    assert [e.seq for e in capped.events] == list(range(MAX_REPLAY_EVENTS))
    assert decode_event(spool.read(KEY, first_seq=7, last_seq=7, limit=1)[0].payload).frame == 7
    assert other.events == ()
    assert other.error is not None and "t1/cam1" in other.error
