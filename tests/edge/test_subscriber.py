"""The subscriber's message handler without sockets: ordering, duplicates, resume, and a fuzzed decoder path."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import zmq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from floorman.core.events import Event, Tap, encode_event, event_topic
from floorman.edge.bus import PublisherKey, ReplayTarget
from floorman.edge.subscriber import EventSubscriber

KEY = PublisherKey("t1", "cam0")


def message(seq: int, *, camera: str = "cam0", table: str = "t1") -> list[bytes]:
    event = Tap(table_id=table, camera_id=camera, seq=seq, t=seq / 30, frame=seq, seat=2)
    return [event_topic(table, "tap").encode(), encode_event(event)]


def feed(sub: EventSubscriber, seqs: list[int], *, camera: str = "cam0") -> list[Event]:
    out: list[Event] = []
    for seq in seqs:
        out.extend(sub.handle_message(message(seq, camera=camera)))
    return out


def test_out_of_order_arrivals_wait_for_the_gap_and_come_out_in_order() -> None:
    sub = EventSubscriber("tcp://127.0.0.1:5551")
    assert [e.seq for e in feed(sub, [0, 1, 4, 3])] == [0, 1]
    assert sub.publishers()[0].buffered == 2
    assert [e.seq for e in feed(sub, [2])] == [2, 3, 4]
    assert sub.stats.gaps == 1
    assert sub.stats.delivered == 5


def test_duplicates_are_dropped_and_counted() -> None:
    sub = EventSubscriber("tcp://127.0.0.1:5551")
    assert [e.seq for e in feed(sub, [0, 1, 1, 0, 3, 3, 2])] == [0, 1, 2, 3]
    assert sub.stats.duplicates == 3


def test_publishers_are_sequenced_independently() -> None:
    sub = EventSubscriber("tcp://127.0.0.1:5551")
    out = feed(sub, [0, 1], camera="cam0") + feed(sub, [1], camera="cam1") + feed(sub, [0], camera="cam1")
    assert [(e.camera_id, e.seq) for e in out] == [("cam0", 0), ("cam0", 1), ("cam1", 0), ("cam1", 1)]


@pytest.mark.parametrize(("options", "first_seq", "expected"), [
    ({"resume": {KEY: 6}}, 7, [7, 8]),
    ({"resume": {KEY: 6}}, 5, [7, 8]),  # 5, 6 were processed before the restart
    ({"start": "latest"}, 7, [7, 8]),
    ({"start": "earliest"}, 7, []),  # 0..6 still to come (by replay)
])
def test_where_a_new_subscriber_starts(options: dict[str, Any], first_seq: int, expected: list[int]) -> None:
    sub = EventSubscriber("tcp://127.0.0.1:5551", **options)
    seqs = list(range(first_seq, 9))
    assert [e.seq for e in feed(sub, seqs)] == expected


def test_a_full_buffer_gives_up_on_the_gap_and_counts_it_lost() -> None:
    sub = EventSubscriber("tcp://127.0.0.1:5551", max_buffer=3)
    assert [e.seq for e in feed(sub, [0, 5, 6, 7])] == [0]
    assert [e.seq for e in feed(sub, [8])] == [5, 6, 7, 8]
    assert sub.stats.lost == 4
    assert sub.positions() == {KEY: 8}


@pytest.mark.parametrize(("frames", "counter"), [
    ([b"floorman/t1/tap"], "foreign"),
    ([b"floorman/t1/tap", b"{}", b"x"], "foreign"),
    ([b"other/t1/tap", message(0)[1]], "foreign"),
    ([b"floorman/t2/tap", message(0)[1]], "foreign"),  # the topic says another table than the payload
    ([b"floorman/t1/shuffle", message(0)[1]], "foreign"),
    ([b"floorman/t1/tap", b"\x80\x81 not json"], "malformed"),
    ([b"floorman/t1/tap", b'{"type": "tap"}'], "malformed"),
    ([b"floorman/t1/tap", message(0)[1].replace(b'"seat":2', b'"seat":11')], "malformed"),
    ([b"floorman/t1/tap", b"\x80\x03}q\x00."], "malformed"),  # a pickle is never unpickled
])
def test_bad_messages_are_counted_and_dropped(frames: list[bytes], counter: str) -> None:
    sub = EventSubscriber("tcp://127.0.0.1:5551")
    assert sub.handle_message(frames) == []
    assert getattr(sub.stats, counter) == 1
    assert sub.stats.received == 1
    assert sub.stats.accepted == 0


_ODD_VALUES: list[Any] = [None, True, -1, 0, 3, 11, 2**63, 1.5, float("inf"), "", "t1", "10H", "ZZ", "seat",
                          "online", "x" * 80, "t/1", [], [1, "2"], {}, {"denom": 25, "count": 2}, {"seq": 0}]
_FIELDS = ["type", "schema_version", "table_id", "camera_id", "seq", "t", "frame", "seat", "count", "zone",
           "face_up", "chips", "value", "status", "extra"]
_TYPES = ["tap"] * 6 + ["shuffle", "heartbeat", "zone_cards", "alert", "TAP", ""]
_VALID = json.loads(encode_event(Tap(table_id="t1", camera_id="cam0", seq=0, t=0.0, frame=0, seat=3)))
_TOPICS = [b"floorman/t1/tap"] * 6 + [b"floorman/t1/", b"floorman/", b"x", b"floorman/t1/shuffle", b"floorman/t2/tap"]


_REMOVE = object()
_MUTATIONS = st.lists(st.tuples(st.sampled_from(_FIELDS), st.sampled_from([*_ODD_VALUES, _REMOVE])), max_size=3)
_RAW = st.lists(st.binary(max_size=40), max_size=4)


@st.composite
def fuzzed_messages(draw: st.DrawFn) -> list[bytes]:
    """Raw frames (1 in 8), or a Tap, often intact, else with fields changed, removed or added; its type, seq,
    topic and a truncation are drawn too."""
    topic, kind, seq, cut = draw(st.tuples(st.sampled_from(_TOPICS), st.sampled_from(_TYPES), st.integers(0, 40),
                                           st.integers(0, 30)))
    if cut > 26:  # raw frames
        return draw(_RAW)
    body = dict(_VALID, type=kind, seq=seq)
    for name, value in draw(_MUTATIONS):
        if value is _REMOVE:
            body.pop(name, None)
        else:
            body[name] = value
    payload = json.dumps(body).encode()
    return [topic, payload[: len(payload) - 9 * cut] if cut < 3 else payload]


FUZZ_SUB = EventSubscriber("tcp://127.0.0.1:5551")
FUZZ_CALLS: list[int] = []
FUZZ_LAST: dict[tuple[str, str], int] = {}


@settings(max_examples=10_000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(frames=fuzzed_messages())
def test_fuzzed_messages_never_crash_and_are_all_counted(frames: list[bytes]) -> None:
    FUZZ_CALLS.append(1)
    for event in FUZZ_SUB.handle_message(frames):  # what comes out is in seq order per publisher, no gap
        key = (event.table_id, event.camera_id)
        assert event.seq == FUZZ_LAST.get(key, -1) + 1
        FUZZ_LAST[key] = event.seq
    stats = FUZZ_SUB.stats
    assert stats.received == len(FUZZ_CALLS)
    assert stats.received == stats.malformed + stats.foreign + stats.accepted
    buffered = sum(p.buffered for p in FUZZ_SUB.publishers())
    assert stats.accepted == stats.delivered + stats.duplicates + buffered


def _dead_endpoint() -> str:
    """A loopback endpoint nobody listens on (bound once to get a free port, then closed)."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sock = context.socket(zmq.ROUTER)
    sock.bind("tcp://127.0.0.1:*")
    endpoint = str(sock.get_string(zmq.LAST_ENDPOINT))
    sock.close(linger=0)
    context.term()
    return endpoint


def _poll_until(sub: EventSubscriber, seq: int, *, timeout: float = 5.0) -> list[int]:
    got: list[int] = []
    deadline = time.monotonic() + timeout
    while seq not in got and time.monotonic() < deadline:
        got.extend(e.seq for e in sub.poll(0.02))
    return got


def test_a_gap_with_no_replay_endpoint_is_skipped_at_once_and_counted() -> None:
    with EventSubscriber(_dead_endpoint()) as sub:
        assert [e.seq for e in feed(sub, [0, 3, 4])] == [0]
        assert _poll_until(sub, 4, timeout=1.0) == [3, 4]
    assert sub.stats.lost == 2
    assert sub.stats.replay_requests == 0


def test_a_silent_replay_endpoint_is_retried_then_given_up_on() -> None:
    with EventSubscriber(_dead_endpoint(), replay={"t1": ReplayTarget(_dead_endpoint())}, replay_timeout=0.1,
                         give_up_after=0.5) as sub:
        assert [e.seq for e in feed(sub, [0, 3])] == [0]
        started = time.monotonic()
        assert _poll_until(sub, 3) == [3]
        waited = time.monotonic() - started
    assert sub.stats.replay_failures >= 2
    assert sub.stats.lost == 2
    assert 0.5 <= waited < 3.0
