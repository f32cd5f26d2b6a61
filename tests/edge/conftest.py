"""Fixtures of the edge tests: for the event bus, real ZeroMQ sockets on loopback, free ports, bounded waits,
closed after; for the derivation, a fresh deriver on the default layout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from floorman.edge.broker import Broker
from floorman.edge.derive import EventDeriver
from floorman.edge.publisher import EventPublisher
from floorman.edge.spool import Spool
from tests.edge.derive_helpers import LAYOUT
from tests.edge.helpers import KEY, LOOPBACK


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker(LOOPBACK, LOOPBACK) as running:
        yield running


@pytest.fixture
def spool(tmp_path: Path) -> Iterator[Spool]:
    store = Spool(tmp_path / "spool.sqlite", max_events=10_000)
    yield store
    store.close()


@pytest.fixture
def publisher(broker: Broker, spool: Spool) -> Iterator[EventPublisher]:
    with EventPublisher(KEY, broker=broker.frontend_endpoint, replay=LOOPBACK, spool=spool,
                        heartbeat_interval=0.2) as running:
        yield running


@pytest.fixture
def deriver() -> EventDeriver:
    return EventDeriver(LAYOUT, table_id="t1", camera_id="c1")
