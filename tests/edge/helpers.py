"""Helpers of the event bus tests: events to publish, bounded collection, a subscriber wired to a publisher."""

from __future__ import annotations

import time
from collections.abc import Callable

from floorman.core.events import Event, Tap
from floorman.edge.broker import Broker
from floorman.edge.bus import PublisherKey, ReplayTarget
from floorman.edge.publisher import EventPublisher
from floorman.edge.subscriber import EventSubscriber

LOOPBACK = "tcp://127.0.0.1:*"
KEY = PublisherKey("t1", "cam0")


def tap(frame: int, key: PublisherKey = KEY) -> Tap:
    """A Tap to publish (the publisher gives it its seq); `frame` tells the events apart."""
    return Tap(table_id=key.table_id, camera_id=key.camera_id, seq=0, t=frame / 30, frame=frame, seat=1 + frame % 9)


def collect(sub: EventSubscriber, *, until: Callable[[list[Event]], bool], timeout: float = 10.0) -> list[Event]:
    """Poll `sub` until `until(events so far)` holds or `timeout` seconds pass."""
    events: list[Event] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not until(events):
        events.extend(sub.poll(0.05))
    return events


def taps_of(events: list[Event]) -> list[int]:
    return [e.frame for e in events if e.type == "tap"]


def subscriber_for(broker: Broker, publisher: EventPublisher, *, resume: dict[PublisherKey, int] | None = None,
                   offline_after: float = 5.0) -> EventSubscriber:
    """A subscriber of `broker` that asks `publisher` for its gaps (not started)."""
    return EventSubscriber(broker.backend_endpoint, replay={KEY: ReplayTarget(publisher.replay_endpoint)},
                           replay_timeout=0.5, resume=resume, offline_after=offline_after)
