"""The checker as a ZeroMQ service: a real PUB -> service -> SUB on loopback, and bad messages."""

from __future__ import annotations

import threading
import time

import zmq

from floorman.core.alerts import ALERT_ADAPTER
from floorman.core.events import EventBase, Heartbeat, encode_event, event_topic
from floorman.rules.checker import RulesChecker
from floorman.rules.rulebook import load_rulebook
from floorman.rules.service import RulesService, subscription_prefix
from tests.rules.checking import table


def _frames(event: EventBase) -> list[bytes]:
    return [event_topic(event.table_id, event.type).encode(), encode_event(event)]


def _pocket_stream(table_id: str = "t1") -> list[EventBase]:
    _, stream, start = table("club_000")
    events = [*start, *stream.push(4, 200), *stream.rail(1, 1000, direction="in")]
    return [e.model_copy(update={"table_id": table_id}) for e in events]


def test_subscription_prefix() -> None:
    assert subscription_prefix("t1") == "floorman/t1/" and subscription_prefix(None) == "floorman/"


def test_bad_messages_are_counted_never_raised() -> None:
    service = RulesService(checker=RulesChecker(rulebook=load_rulebook("club_000")), subscribe="tcp://127.0.0.1:1",
                           publish="tcp://127.0.0.1:2", table="t1")
    good = _pocket_stream()
    assert service.handle_message([b"floorman/t1/zone_chips", b"{not json"]) == []
    assert service.handle_message([b"floorman/t1/tap"]) == []
    assert service.handle_message([b"floorman/t1/tap", b'{"type": "tap", "table_id": "t1"}']) == []
    assert service.handle_message([b"floorman/t1/shuffle", encode_event(good[0])]) == []  # topic of another type
    assert service.handle_message([b"other/t1/tap", encode_event(good[0])]) == []
    assert service.handle_message(_frames(_pocket_stream("t2")[0])) == []  # another table: not ours
    alerts = [a for event in good for a in service.handle_message(_frames(event))]
    assert [(a.rule.value, a.seat) for a in alerts] == [("D2", 1)]
    assert (service.stats.malformed, service.stats.foreign, service.stats.events) == (2, 4, len(good))


def test_service_over_zeromq_loopback() -> None:
    """Events on a PUB socket, the service in a thread, alerts on a SUB socket; every wait is bounded.

    PUB/SUB drops what is sent before a subscription arrives, so the test first sends heartbeats until the
    service has counted one, then sends a hand with pocket chips, and sends it again under a new table id
    (a fresh hand state) until the alert comes back.
    """
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    events_out = context.socket(zmq.PUB)
    alerts_in = context.socket(zmq.SUB)
    try:
        events_out.linger = alerts_in.linger = 0
        port_in = events_out.bind_to_random_port("tcp://127.0.0.1")
        alerts_in.subscribe(b"floorman/")
        port_out = alerts_in.bind_to_random_port("tcp://127.0.0.1")
        checker = RulesChecker(rulebook=load_rulebook("club_000"))
        service = RulesService(checker=checker, subscribe=f"tcp://127.0.0.1:{port_in}",
                               publish=f"tcp://127.0.0.1:{port_out}")
        stop = threading.Event()
        frames: list[bytes] = []
        with service:
            worker = threading.Thread(target=service.run, kwargs={"stop": stop, "poll_ms": 20})
            worker.start()
            try:
                beat = Heartbeat(table_id="t0", seq=0, t=0.0, frame=0, status="online", fps=30.0, latency_ms=5.0,
                                 frames_dropped=0)
                deadline = time.monotonic() + 10
                while service.stats.events == 0 and time.monotonic() < deadline:
                    events_out.send_multipart(_frames(beat))
                    time.sleep(0.05)
                assert service.stats.events > 0
                events_out.send_multipart([b"floorman/t1/tap", b"garbage"])
                for attempt in range(1, 6):
                    for event in _pocket_stream(f"t{attempt}"):
                        events_out.send_multipart(_frames(event))
                    if alerts_in.poll(2_000, zmq.POLLIN):
                        frames = alerts_in.recv_multipart()
                        break
            finally:
                stop.set()
                worker.join(10)
        assert not worker.is_alive()
        topic, payload = frames
        alert = ALERT_ADAPTER.validate_json(payload)
        assert topic == f"floorman/{alert.table_id}/alert".encode()
        assert (alert.rule.value, alert.seat) == ("D2", 1)
        assert service.stats.malformed == 1 and service.stats.alerts >= 1
    finally:
        events_out.close()
        alerts_in.close()
        context.term()
