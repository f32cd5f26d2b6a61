"""The checker as a service: the transport-free core (rules.service) and the bus wiring (floorman.serve).

The loopback test runs the real bus: an edge publisher with its spool and replay socket, the broker, the
service (EventSubscriber in, PUB out to the same broker) and a consumer of the alerts; the first part of the
hand is published before the service runs, so it reaches the checker only through a replay (a gap filled).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import zmq

from floorman.cli import build_parser
from floorman.core.alerts import ALERT_ADAPTER, Alert
from floorman.core.events import EventBase, Heartbeat, encode_event, event_topic
from floorman.edge.broker import Broker
from floorman.edge.bus import PublisherKey, ReplayTarget
from floorman.edge.publisher import EventPublisher
from floorman.edge.spool import Spool
from floorman.rules.rulebook import load_rulebook
from floorman.rules.sanctions import SanctionEntry, SanctionRegister
from floorman.rules.service import CheckerService, alert_message, is_alert_topic
from floorman.serve import EventsOnly, RulesService, replay_targets, run_service
from tests.rules.checking import table

LOOPBACK = "tcp://127.0.0.1:*"


def _frames(event: EventBase) -> list[bytes]:
    return [event_topic(event.table_id, event.type).encode(), encode_event(event)]


def _pocket_stream(table_id: str = "t1") -> list[EventBase]:
    """club_000: a hand starts, seat 4 opens, seat 1 brings chips in over the rail (D2, 000 13-3)."""
    _, stream, start = table("club_000")
    events = [*start, *stream.push(4, 200), *stream.rail(1, 1000, direction="in")]
    return [e.model_copy(update={"table_id": table_id}) for e in events]


def _beat(table_id: str = "t1", seq: int = 0) -> Heartbeat:
    return Heartbeat(table_id=table_id, seq=seq, t=1.7e9, frame=0, status="online", fps=30.0, latency_ms=5.0,
                     frames_dropped=0)


def test_alert_topics_are_told_from_event_topics() -> None:
    alert = CheckerService(rulebook=load_rulebook("club_000")).feed(_pocket_stream())[0]
    topic, payload = alert_message(alert)
    assert topic == b"floorman/t1/alert" and ALERT_ADAPTER.validate_json(payload) == alert
    assert is_alert_topic(topic)
    assert not any(is_alert_topic(_frames(e)[0]) for e in _pocket_stream())
    assert not is_alert_topic(b"floorman/alert/tap")  # a table named "alert" is still a table


def test_alerts_on_the_same_broker_are_skipped_not_counted_malformed() -> None:
    sub = EventsOnly("tcp://127.0.0.1:1", tables=["t1"])
    alert = CheckerService(rulebook=load_rulebook("club_000")).feed(_pocket_stream())[0]
    assert sub.handle_message(alert_message(alert)) == []
    assert sub.handle_message([b"floorman/t1/tap", b"{not json"]) == []
    events = [e for event in _pocket_stream() for e in sub.handle_message(_frames(event))]
    assert [e.seq for e in events] == list(range(len(_pocket_stream())))
    assert (sub.alerts_skipped, sub.stats.malformed, sub.stats.foreign) == (1, 1, 0)


def test_heartbeats_are_not_play_and_one_register_counts_across_hands_and_tables() -> None:
    core = CheckerService(rulebook=load_rulebook("club_000"), tournament_id="open-2026")
    first = core.feed([_beat(), *_pocket_stream("t1")])
    again = core.feed(_pocket_stream("t2"))
    assert [(a.table_id, a.rule.value, a.seat) for a in first + again] == [("t1", "D2", 1), ("t2", "D2", 1)]
    assert core.stats.heartbeats == 1 and core.stats.events == 2 * len(_pocket_stream())
    suggestion = first[0].suggested_sanction
    assert suggestion is not None and not suggestion.applied
    assert (suggestion.player, suggestion.level, suggestion.occurrence, suggestion.flagged) == \
        ("t1/seat 1", "avertissement", 1, 1)
    assert first[0].raised_at == _pocket_stream()[-2].t  # the rail crossing, not the stack update after it


def test_the_flag_count_of_a_seat_is_kept_across_hands() -> None:
    core = CheckerService(rulebook=load_rulebook("club_000"))
    checker, stream, start = table("club_000")
    del checker
    first = [*start, *stream.rail(1, 1000, direction="in")]
    second = [*stream.shuffle(), *stream.push(2, 100), *stream.push(3, 200), *stream.deal([2, 3, 4, 1]),
              *stream.rail(1, 500, direction="in")]
    alerts = core.feed([*first, *second])
    assert [(a.hand_number, a.rule.value, a.seat) for a in alerts] == [(1, "D2", 1), (2, "D2", 1)]
    assert [a.suggested_sanction.flagged for a in alerts if a.suggested_sanction] == [1, 2]


def test_the_directors_register_file_is_reread_and_the_ladder_climbs(tmp_path: Path) -> None:
    """000 15-1: a second warning for the same fault comes with a fine of one big blind."""
    book = load_rulebook("club_000")
    path = tmp_path / "register.json"
    core = CheckerService(rulebook=book, register_path=path)
    assert not core.refresh_register()  # no file yet: nothing recorded
    register = SanctionRegister(rulebook=book, tournament_id="open-2026")
    register.record(SanctionEntry(player="t1/seat 1", infraction="D2", level="avertissement"))
    register.save(path)
    assert core.refresh_register() and not core.refresh_register()
    alert = core.feed(_pocket_stream())[0]
    suggestion = alert.suggested_sanction
    assert suggestion is not None
    assert (suggestion.level, suggestion.occurrence, suggestion.fine) == ("avertissement_amende", 2, 200)
    assert alert.sanction is not None and "fine 200" in alert.sanction
    path.write_text("{broken", encoding="utf-8")
    assert not core.refresh_register() and len(core.register.entries) == 1  # a bad file keeps the register


def test_replay_targets_and_the_command_line() -> None:
    assert replay_targets(["t1=tcp://127.0.0.1:7001"], table=None) == {"t1": ReplayTarget("tcp://127.0.0.1:7001")}
    assert replay_targets(["tcp://127.0.0.1:7001"], table="t9") == {"t9": ReplayTarget("tcp://127.0.0.1:7001")}
    with pytest.raises(ValueError, match="TABLE=ENDPOINT"):
        replay_targets(["tcp://127.0.0.1:7001"], table=None)
    args = build_parser().parse_args(["rules", "--subscribe", "tcp://127.0.0.1:5551", "--publish",
                                      "tcp://127.0.0.1:5550", "--rulebook", "ggc", "--table", "t1", "--publish-bind"])
    assert args.handler is run_service
    assert (args.subscribe, args.publish, args.rulebook, args.table, args.publish_bind) == \
        ("tcp://127.0.0.1:5551", "tcp://127.0.0.1:5550", "ggc", "t1", True)
    assert build_parser().parse_args(["rules", "list"]).handler is not run_service
    assert run_service(build_parser().parse_args(["rules", "--rulebook", "ggc"])) == 2


def _serve_until(service: RulesService, stop: threading.Event) -> None:
    while not stop.is_set():
        service.step(0.02)


def test_service_on_the_bus_fills_a_gap_and_publishes_to_the_same_broker(tmp_path: Path) -> None:
    """Events in through the broker, the first part only by replay; the alert out to the same broker."""
    stream = _pocket_stream()
    early, late = stream[:10], stream[10:]
    spool = Spool(tmp_path / "spool.sqlite", max_events=10_000)
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    alerts_in = context.socket(zmq.SUB)
    alerts_in.linger = 0
    alerts_in.subscribe(b"floorman/t1/alert")
    frames: list[bytes] = []
    try:
        with Broker(LOOPBACK, LOOPBACK) as broker, \
                EventPublisher(PublisherKey("t1", "sim"), broker=broker.frontend_endpoint, replay=LOOPBACK,
                               spool=spool, heartbeat_interval=0.05) as edge:
            for event in early:  # no consumer yet: these reach the service only through a replay
                edge.publish(event)
            alerts_in.connect(broker.backend_endpoint)
            consumer = EventsOnly(broker.backend_endpoint, tables=["t1"])
            service = RulesService(core=CheckerService(rulebook=load_rulebook("club_000")),
                                   subscribe=broker.backend_endpoint, publish=broker.frontend_endpoint,
                                   table="t1", replay={"t1": ReplayTarget(edge.replay_endpoint)},
                                   replay_timeout=0.5)
            stop = threading.Event()
            with service, consumer:
                worker = threading.Thread(target=_serve_until, args=(service, stop))
                worker.start()
                try:
                    deadline = time.monotonic() + 10
                    while service.stats.bus.replayed < len(early) and time.monotonic() < deadline:
                        time.sleep(0.02)  # the heartbeats make the gap visible; the replay fills it
                    for event in late:
                        edge.publish(event)
                    deadline = time.monotonic() + 10
                    while not (frames and service.stats.alerts_skipped and consumer.alerts_skipped) \
                            and time.monotonic() < deadline:
                        consumer.poll(0.02)  # a plain consumer of the table sees the alert too: skipped
                        if not frames and alerts_in.poll(20, zmq.POLLIN):
                            frames = alerts_in.recv_multipart()
                finally:
                    stop.set()
                    worker.join(10)
                stats = service.stats
    finally:
        alerts_in.close()
        context.term()
        spool.close()
    assert not worker.is_alive()
    topic, payload = frames
    alert = ALERT_ADAPTER.validate_json(payload)
    assert topic == b"floorman/t1/alert" and (alert.rule.value, alert.seat) == ("D2", 1)
    assert stats.bus.gaps >= 1 and stats.bus.replayed >= len(early) and stats.bus.lost == 0
    assert stats.checker.events == len(stream) and stats.bus.malformed == 0 and stats.bus.foreign == 0
    assert stats.published == 1 and stats.alerts_skipped >= 1  # its own alert came back and was left out
    assert consumer.alerts_skipped >= 1 and consumer.stats.malformed == 0


def test_service_on_a_curve_bus_hears_the_edge_and_a_service_without_keys_hears_nothing(tmp_path: Path) -> None:
    """CURVE broker: the edge and the rules service are on its allow-list; a service without keys gets nothing."""
    from floorman.edge.broker import BrokerSecurity
    from floorman.edge.keys import generate_keypair, load_allow_list, load_keypair
    from floorman.edge.publisher import PublisherSecurity
    from floorman.edge.subscriber import SubscriberSecurity

    certs = {name: generate_keypair(tmp_path / "secrets", name=name) for name in ("broker", "edge", "rules")}
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    for name in ("edge", "rules"):  # publishers into the frontend: the edge, and the service's alerts
        certs[name][0].rename(allowed / certs[name][0].name)
    broker_public = tmp_path / "broker.key"
    certs["broker"][0].rename(broker_public)
    security = BrokerSecurity(keys=load_keypair(certs["broker"][1]), edge_keys=load_allow_list(allowed))
    keyed = SubscriberSecurity.from_files(keys=certs["rules"][1], broker=broker_public)
    stream = _pocket_stream()
    with Broker(LOOPBACK, LOOPBACK, security=security) as broker:
        services = [RulesService(core=CheckerService(rulebook=load_rulebook("club_000")),
                                 subscribe=broker.backend_endpoint, publish=broker.frontend_endpoint, table="t1",
                                 security=sec, discovery_wait=0.0) for sec in (keyed, None)]
        with services[0], services[1], EventPublisher(
                PublisherKey("t1", "sim"), broker=broker.frontend_endpoint, replay=LOOPBACK,
                spool=Spool(":memory:"), heartbeat_interval=0.05,
                security=PublisherSecurity.from_files(keys=certs["edge"][1], broker=broker_public)) as edge:
            time.sleep(0.5)  # CURVE handshakes and subscriptions
            for event in stream:
                edge.publish(event)
            raised: list[list[Alert]] = [[], []]
            deadline = time.monotonic() + 10
            while not raised[0] and time.monotonic() < deadline:
                for i, service in enumerate(services):
                    raised[i].extend(service.step(0.02))
            for _ in range(20):
                raised[1].extend(services[1].step(0.02))
            heard = [service.stats.bus.received for service in services]
    assert [(a.rule.value, a.seat) for a in raised[0]] == [("D2", 1)]
    assert heard[0] >= len(stream) and heard[1] == 0 and raised[1] == []
