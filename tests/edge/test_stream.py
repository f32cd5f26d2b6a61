"""The bus end to end on loopback: restarts lose nothing and duplicate nothing; heartbeats mark a silent edge."""

from __future__ import annotations

import time

from floorman.edge.broker import Broker
from floorman.edge.bus import PublisherKey
from floorman.edge.publisher import EventPublisher
from floorman.edge.spool import Spool
from tests.edge.helpers import KEY, LOOPBACK, collect, subscriber_for, tap, taps_of


def publish_range(publisher: EventPublisher, frames: range) -> None:
    for frame in frames:
        publisher.publish(tap(frame))
        time.sleep(0.0005)


def test_restart_broker_and_consumer_mid_stream_every_seq_once_in_order(broker: Broker,
                                                                        publisher: EventPublisher) -> None:
    first = subscriber_for(broker, publisher).start()
    try:
        publish_range(publisher, range(100))
        before = collect(first, until=lambda got: 99 in taps_of(got))
        # the broker goes down mid-stream; what is published meanwhile never reaches the wire
        front, back = broker.frontend_endpoint, broker.backend_endpoint
        broker.stop()
        publish_range(publisher, range(100, 150))
        with Broker(front, back):
            publish_range(publisher, range(150, 250))
            before += collect(first, until=lambda got: 249 in taps_of(got))
            resume = first.positions()
            first.close()
            # the consumer is down mid-stream; it comes back with the last seq it processed
            publish_range(publisher, range(250, 300))
            with subscriber_for(broker, publisher, resume=resume) as second:
                publish_range(publisher, range(300, 400))
                after = collect(second, until=lambda got: 399 in taps_of(got))
                stats = second.stats
    finally:
        first.close()
    seqs = [e.seq for e in before + after]
    assert seqs == list(range(len(seqs)))
    assert taps_of(before + after) == list(range(400))
    assert stats.lost == 0
    assert stats.replayed > 0  # the 50 events published while no consumer ran came by replay


def test_replay_of_events_dropped_from_the_spool_counts_them_lost(broker: Broker) -> None:
    spool = Spool(max_events=20)
    with EventPublisher(KEY, broker=broker.frontend_endpoint, replay=LOOPBACK, spool=spool,
                        heartbeat_interval=0.2) as publisher:
        publish_range(publisher, range(50))
        with subscriber_for(broker, publisher, resume={KEY: 4}) as sub:
            got = collect(sub, until=lambda events: 49 in taps_of(events))
        appended = spool.stats.appended
    spool.close()
    seqs = [e.seq for e in got]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert seqs[0] > 5 + 20  # the spool kept only the newest 20 of the 51+ events
    assert sub.stats.lost == seqs[0] - 5  # 5..oldest-1 are gone for good, and said so
    assert taps_of(got) == list(range(taps_of(got)[0], 50))
    assert spool.stats.dropped == appended - 20


def test_heartbeats_keep_an_edge_online_and_silence_marks_it_offline(broker: Broker,
                                                                     publisher: EventPublisher) -> None:
    with subscriber_for(broker, publisher, offline_after=0.6) as sub:
        got = collect(sub, until=lambda events: sum(e.type == "heartbeat" for e in events) >= 4, timeout=5)
        assert sum(e.type == "heartbeat" for e in got) >= 4
        assert [s.online for s in sub.publishers()] == [True]
        publisher.stop()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and sub.publishers()[0].online:
            sub.poll(0.05)
        status = sub.publishers()[0]
    assert status.key == PublisherKey("t1", "cam0")
    assert not status.online
    assert status.seconds_since_seen >= 0.6
