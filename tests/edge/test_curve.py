"""CURVE on the bus: only allowed edges get through the broker, only peers with the right keys hear anything."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from floorman.edge.broker import Broker, BrokerSecurity
from floorman.edge.bus import PublisherKey, ReplayRequest, ReplayTarget, topic_prefix
from floorman.edge.keys import KeyPair, generate_keypair, load_allow_list, load_keypair, make_client
from floorman.edge.publisher import EventPublisher, PublisherSecurity
from floorman.edge.spool import Spool
from floorman.edge.subscriber import EventSubscriber, SubscriberSecurity
from tests.edge.helpers import LOOPBACK, tap, taps_of

ALLOWED = PublisherKey("ok", "cam0")
REFUSED = PublisherKey("intruder", "cam0")


def keypair(folder: Path, name: str) -> KeyPair:
    return load_keypair(generate_keypair(folder, name=name)[1])


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, KeyPair]:
    allowed = tmp_path / "allowed"
    pairs = {name: keypair(tmp_path / "secrets", name) for name in ("broker", "edge", "intruder", "consumer")}
    allowed.mkdir()
    (tmp_path / "secrets" / "edge.key").rename(allowed / "edge.key")
    return pairs


@pytest.fixture
def curve_broker(keys: dict[str, KeyPair], tmp_path: Path) -> Iterator[Broker]:
    security = BrokerSecurity(keys=keys["broker"], edge_keys=load_allow_list(tmp_path / "allowed"))
    with Broker(LOOPBACK, LOOPBACK, security=security) as running:
        yield running


def raw_sub(context: zmq.Context[zmq.Socket[bytes]], endpoint: str, *, client: KeyPair | None = None,
            server_key: bytes | None = None) -> zmq.Socket[bytes]:
    sock = context.socket(zmq.SUB)
    sock.linger = 0
    if client is not None and server_key is not None:
        make_client(sock, client, server_key=server_key)
    sock.subscribe(topic_prefix())
    sock.connect(endpoint)
    return sock


def ask_replay(context: zmq.Context[zmq.Socket[bytes]], endpoint: str, *, client: KeyPair | None,
               server_key: bytes) -> bool:
    """Whether the replay endpoint answers a request from a DEALER with these keys (None: no CURVE)."""
    dealer = context.socket(zmq.DEALER)
    dealer.linger = 0
    if client is not None:
        make_client(dealer, client, server_key=server_key)
    dealer.connect(endpoint)
    request = ReplayRequest(request_id=1, table_id="ok", camera_id="cam0", first_seq=0, last_seq=5)
    dealer.send_multipart([b"", request.model_dump_json().encode()])
    answered = bool(dealer.poll(500))
    dealer.close()
    return answered


def drain(sock: zmq.Socket[bytes]) -> int:
    count = 0
    while sock.poll(0):
        sock.recv_multipart()
        count += 1
    return count


def test_only_allowed_edges_publish_and_only_keyed_consumers_hear(curve_broker: Broker, keys: dict[str, KeyPair],
                                                                  tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    (tmp_path / "consumers").mkdir()
    (secrets / "consumer.key").rename(tmp_path / "consumers" / "consumer.key")
    broker_key = keys["broker"].public
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    eavesdroppers = [raw_sub(context, curve_broker.backend_endpoint),  # no CURVE at all
                     raw_sub(context, curve_broker.backend_endpoint, client=keys["consumer"],
                             server_key=keys["intruder"].public)]  # the wrong server key
    edge_spool, intruder_spool = Spool(), Spool()
    edge = EventPublisher(ALLOWED, broker=curve_broker.frontend_endpoint, replay=LOOPBACK, spool=edge_spool,
                          security=PublisherSecurity.from_files(keys=secrets / "edge.key_secret",
                                                                broker=secrets / "broker.key",
                                                                consumers=tmp_path / "consumers")).start()
    intruder = EventPublisher(REFUSED, broker=curve_broker.frontend_endpoint, replay=LOOPBACK, spool=intruder_spool,
                              security=PublisherSecurity(keys=keys["intruder"], broker_key=broker_key)).start()
    sub = EventSubscriber(curve_broker.backend_endpoint, replay_timeout=0.5,
                          replay={ALLOWED: ReplayTarget(edge.replay_endpoint, server_key=keys["edge"].public)},
                          security=SubscriberSecurity.from_files(keys=secrets / "consumer.key_secret",
                                                                 broker=secrets / "broker.key")).start()
    try:
        got, heard = [], 0
        deadline = time.monotonic() + 1.5
        frame = 0
        while time.monotonic() < deadline:
            edge.publish(tap(frame, ALLOWED))
            intruder.publish(tap(frame, REFUSED))
            frame += 1
            got.extend(sub.poll(0.01))
            heard += sum(drain(sock) for sock in eavesdroppers)
        edge_key = keys["edge"].public
        replay_answers = [ask_replay(context, edge.replay_endpoint, client=client, server_key=edge_key)
                          for client in (None, keys["intruder"], keys["consumer"])]
    finally:
        sub.close()
        edge.stop()
        intruder.stop()
        for sock in eavesdroppers:
            sock.close()
        context.term()
    assert {e.table_id for e in got} == {"ok"}
    assert taps_of(got) == list(range(taps_of(got)[-1] + 1))  # every allowed tap, in order
    assert len(taps_of(got)) > 10
    assert heard == 0
    # the replay socket is CURVE too, with its own allow-list: only the known consumer gets an answer
    assert replay_answers == [False, False, True]


def test_the_consumer_allow_list_keeps_unknown_consumers_out(keys: dict[str, KeyPair], tmp_path: Path) -> None:
    security = BrokerSecurity(keys=keys["broker"], edge_keys=load_allow_list(tmp_path / "allowed"),
                              consumer_keys=frozenset({keys["consumer"].public}))
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    with Broker(LOOPBACK, LOOPBACK, security=security) as broker:
        known = raw_sub(context, broker.backend_endpoint, client=keys["consumer"], server_key=keys["broker"].public)
        unknown = raw_sub(context, broker.backend_endpoint, client=keys["intruder"],
                          server_key=keys["broker"].public)
        with EventPublisher(ALLOWED, broker=broker.frontend_endpoint, replay=LOOPBACK, spool=Spool(),
                            security=PublisherSecurity(keys=keys["edge"], broker_key=keys["broker"].public)) as edge:
            counts = [0, 0]
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                edge.publish(tap(0, ALLOWED))
                time.sleep(0.01)
                counts = [counts[0] + drain(known), counts[1] + drain(unknown)]
        known.close()
        unknown.close()
    context.term()
    assert counts[0] > 10
    assert counts[1] == 0
