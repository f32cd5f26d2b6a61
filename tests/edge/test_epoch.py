"""Replay discovery and epochs on loopback: heartbeats announce where to ask, a lost spool starts a new epoch."""

from __future__ import annotations

import time
from pathlib import Path

from floorman.core.events import Heartbeat
from floorman.edge.broker import Broker
from floorman.edge.publisher import EventPublisher, reachable
from floorman.edge.spool import Spool
from floorman.edge.subscriber import EventSubscriber
from tests.edge.helpers import KEY, LOOPBACK, collect, tap, taps_of


def start_publisher(broker: Broker, spool: Spool) -> EventPublisher:
    return EventPublisher(KEY, broker=broker.frontend_endpoint, replay=LOOPBACK, spool=spool,
                          heartbeat_interval=0.1).start()


def publish(publisher: EventPublisher, frames: range) -> None:
    for frame in frames:
        publisher.publish(tap(frame))
        time.sleep(0.001)


def test_heartbeats_announce_the_replay_endpoint_and_the_epoch(broker: Broker, spool: Spool) -> None:
    publisher = start_publisher(broker, spool)
    try:
        beat = publisher.heartbeat()
    finally:
        publisher.stop()
    assert isinstance(beat, Heartbeat)
    assert beat.replay_endpoint == publisher.replay_endpoint
    assert beat.epoch == publisher.epoch and beat.epoch is not None


def test_the_epoch_goes_on_with_the_spool_and_changes_when_it_is_lost(broker: Broker, tmp_path: Path) -> None:
    kept = Spool(tmp_path / "kept.sqlite")
    first = start_publisher(broker, kept)
    first.stop()
    again = start_publisher(broker, kept)
    again.stop()
    kept.close()
    fresh = Spool(tmp_path / "fresh.sqlite")
    lost = start_publisher(broker, fresh)
    lost.stop()
    fresh.close()
    assert again.epoch == first.epoch and again.next_seq == first.next_seq + 1  # one more heartbeat
    assert lost.epoch != first.epoch and lost.next_seq == 1  # its first heartbeat is seq 0


def test_a_subscriber_finds_the_replay_endpoint_and_follows_a_new_epoch(broker: Broker, tmp_path: Path) -> None:
    first_spool = Spool(tmp_path / "a.sqlite")
    publisher = start_publisher(broker, first_spool)
    sub = EventSubscriber(broker.backend_endpoint, replay_timeout=0.5, discovery_wait=3.0).start()
    try:
        time.sleep(0.3)
        publish(publisher, range(50))
        before = collect(sub, until=lambda got: 49 in taps_of(got))
        publisher.stop()
        first_spool.close()
        # what the first publisher sent last (its stop heartbeat) belongs to the old epoch: take it in before
        last = publisher.next_seq - 1
        before += collect(sub, until=lambda got: any(e.seq == last for e in before + got))
        # the edge comes back with its spool lost: seq starts at 0 again under a new epoch
        second_spool = Spool(tmp_path / "b.sqlite")
        publisher = start_publisher(broker, second_spool)
        publish(publisher, range(100, 150))
        after = collect(sub, until=lambda got: 149 in taps_of(got))
        publisher.stop()
        second_spool.close()
    finally:
        sub.close()
    assert taps_of(before) == list(range(50))
    assert taps_of(after) == list(range(100, 150))
    assert [e.seq for e in after] == list(range(len(after)))  # the new numbering, from 0, each once
    assert sub.stats.epochs == 1 and sub.stats.discovered >= 1
    assert sub.stats.lost == 0


def test_a_wildcard_bind_is_announced_with_this_machines_name() -> None:
    assert reachable("tcp://0.0.0.0:5560").startswith("tcp://") and "0.0.0.0" not in reachable("tcp://0.0.0.0:5560")
    assert reachable("tcp://127.0.0.1:5560") == "tcp://127.0.0.1:5560"
    assert reachable("ipc:///tmp/x") == "ipc:///tmp/x"
