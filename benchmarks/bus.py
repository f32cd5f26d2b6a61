"""Event bus throughput and latency on loopback, through the broker, plain and with CURVE.

    .venv/bin/python benchmarks/bus.py [--events 20000] [--rate 2000] [--latency-events 4000]

For each security mode (plain, CURVE) a broker runs in this process (its proxy is libzmq's, off the GIL), an
`EventPublisher` (SQLite spool on disk, JSON, pydantic) publishes `Tap` events, and an `EventSubscriber`
in a child process (its own interpreter) receives them through the broker:

- throughput: --events published as fast as `publish` goes; events/s from the first publish to the last
  event handed to the application (every seq, in order: anything dropped on the wire comes back by replay,
  and the replays are counted in the table);
- latency: --latency-events published at --rate events/s; each event's `t` is its wall-clock publish time,
  the subscriber measures hand-over time minus `t`; p50 and p99.

The peer in the same run is the bare pyzmq path: the same broker (and CURVE keys), multipart frames of the same
JSON bytes from a PUB socket to a SUB socket, with no numbering, spool, validation, ordering or replay.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path

import zmq

from floorman.core.events import Tap, encode_event, event_topic
from floorman.edge.broker import Broker, BrokerSecurity
from floorman.edge.bus import PublisherKey, ReplayTarget
from floorman.edge.keys import KeyPair, generate_keypair, load_keypair, make_client
from floorman.edge.publisher import EventPublisher, PublisherSecurity
from floorman.edge.spool import Spool
from floorman.edge.subscriber import EventSubscriber, SubscriberSecurity

KEY = PublisherKey("bench", "cam0")
LOOPBACK = "tcp://127.0.0.1:*"


@dataclass(frozen=True)
class Curve:
    broker: KeyPair
    edge: KeyPair
    consumer: KeyPair


@dataclass(frozen=True)
class Received:
    count: int
    first_at: float
    last_at: float
    latencies_ms: list[float]
    replayed: int
    in_order: bool


def _make_curve(folder: Path) -> Curve:
    pairs = [load_keypair(generate_keypair(folder, name=name)[1]) for name in ("broker", "edge", "consumer")]
    return Curve(*pairs)


def tap(frame: int) -> Tap:
    return Tap(table_id=KEY.table_id, camera_id=KEY.camera_id, seq=0, t=time.time(), frame=frame, seat=1)


def consume(backend: str, *, replay: str, curve: Curve | None, expected: int, ready: Queue[bool],
            results: Queue[Received]) -> None:
    """Child process: receive `expected` taps through the bus (or bare SUB when replay is '')."""
    if not replay:
        results.put(_consume_bare(backend, expected=expected, ready=ready, curve=curve))
        return
    security = None if curve is None else SubscriberSecurity(keys=curve.consumer, broker_key=curve.broker.public)
    target = ReplayTarget(replay, server_key=None if curve is None else curve.edge.public)
    latencies: list[float] = []
    seqs: list[int] = []
    first_at = last_at = 0.0
    with EventSubscriber(backend, replay={KEY: target}, security=security, start="latest") as sub:
        signalled = False
        deadline = time.monotonic() + 120
        while len(latencies) < expected and time.monotonic() < deadline:
            for event in sub.poll(0.05):
                now = last_at = time.time()
                if not signalled:
                    ready.put(True)
                    signalled = True
                if event.type == "tap":
                    first_at = first_at or now
                    latencies.append((now - event.t) * 1000)
                seqs.append(event.seq)
        replayed = sub.stats.replayed
    in_order = seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False
    results.put(Received(count=len(latencies), first_at=first_at, last_at=last_at, latencies_ms=latencies,
                         replayed=replayed, in_order=in_order))


def _consume_bare(backend: str, *, expected: int, ready: Queue[bool], curve: Curve | None) -> Received:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.rcvhwm = 0
    if curve is not None:
        make_client(sub, curve.consumer, server_key=curve.broker.public)
    sub.subscribe(b"floorman/")
    sub.connect(backend)
    latencies: list[float] = []
    first_at = last_at = 0.0
    signalled = False
    while len(latencies) < expected:
        if not sub.poll(3000 if latencies else 60_000):
            break  # what did not come within 3 s was dropped on the way: PUB/SUB has no replay
        topic, payload = sub.recv_multipart()
        now = last_at = time.time()
        if topic.endswith(b"/heartbeat"):
            if not signalled:
                ready.put(True)
                signalled = True
            continue
        first_at = first_at or now
        latencies.append((now - Tap.model_validate_json(payload).t) * 1000)
    sub.close(linger=0)
    context.term()
    return Received(count=len(latencies), first_at=first_at, last_at=last_at, latencies_ms=latencies,
                    replayed=0, in_order=True)


def run_case(*, curve: Curve | None, bare: bool, events: int, rate: float | None) -> Received:
    """One measurement: a broker, a publisher here, a subscriber process."""
    security = None if curve is None else BrokerSecurity(keys=curve.broker, edge_keys=frozenset({curve.edge.public}))
    ctx = mp.get_context("spawn")
    ready: Queue[bool] = ctx.Queue()
    results: Queue[Received] = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp, Broker(LOOPBACK, LOOPBACK, security=security) as broker:
        spool = Spool(Path(tmp) / "spool.sqlite", max_events=events + 1000)
        pub_security = None if curve is None else PublisherSecurity(keys=curve.edge, broker_key=curve.broker.public)
        with EventPublisher(KEY, broker=broker.frontend_endpoint, replay=LOOPBACK, spool=spool,
                            security=pub_security, heartbeat_interval=0.05) as publisher:
            child = ctx.Process(target=consume, args=(broker.backend_endpoint,), kwargs={
                "replay": "" if bare else publisher.replay_endpoint, "curve": curve, "expected": events,
                "ready": ready, "results": results})
            child.start()
            ready.get(timeout=60)
            publisher.heartbeat_interval = 1.0
            _publish(publisher, events=events, rate=rate, bare=bare)
            received = results.get(timeout=180)
            child.join(10)
        spool.close()
    return received


def _publish(publisher: EventPublisher, *, events: int, rate: float | None, bare: bool) -> None:
    if bare:
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        pub = context.socket(zmq.PUB)
        pub.sndhwm = 0
        if publisher.security is not None:
            make_client(pub, publisher.security.keys, server_key=publisher.security.broker_key)
        pub.connect(publisher.broker)
        time.sleep(0.3)  # the bare peer has no replay: let the subscription reach this socket
        topic = event_topic(KEY.table_id, "tap").encode()
    start = time.perf_counter()
    for frame in range(events):
        if rate is not None:
            delay = start + frame / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        if bare:
            pub.send_multipart([topic, encode_event(tap(frame))])
        else:
            publisher.publish(tap(frame))
    if bare:
        time.sleep(0.5)  # let the queue drain before closing
        pub.close(linger=5000)
        context.term()


def _rate(received: Received) -> float:
    seconds = received.last_at - received.first_at
    return received.count / seconds if seconds > 0 else float("nan")


def _row(name: str, *, through: Received, timed: Received, total: int, peer_rate: float) -> str:
    rate = _rate(through)
    p50 = statistics.median(timed.latencies_ms)
    p99 = statistics.quantiles(timed.latencies_ms, n=100)[98]
    complete = f"{through.count}/{total}" + ("" if through.in_order else " OUT OF ORDER")
    return (f"| {name:<18} | {rate:>10,.0f} | {rate / peer_rate:>7.2f} | {p50:>8.2f} | {p99:>8.2f} | {complete:>11} "
            f"| {through.replayed:>8} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000, help="events for the throughput run")
    parser.add_argument("--latency-events", type=int, default=4000, help="events for the latency run")
    parser.add_argument("--rate", type=float, default=2000.0, help="events/s of the latency run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as keys_dir:
        curve = _make_curve(Path(keys_dir))
    print(f"{args.events} events as fast as possible; {args.latency_events} at {args.rate:.0f}/s for latency. "
          "'vs peer': events/s over the bare pyzmq row of the same security.")
    print("| path               |   events/s | vs peer | p50 (ms) | p99 (ms) |    received | replayed |")
    print("|--------------------|-----------:|--------:|---------:|---------:|------------:|---------:|")
    for security, case_curve in (("plain", None), ("CURVE", curve)):
        peer_rate = float("nan")
        for name, bare in ((f"bare pyzmq, {security}", True), (f"bus, {security}", False)):
            through = run_case(curve=case_curve, bare=bare, events=args.events, rate=None)
            timed = run_case(curve=case_curve, bare=bare, events=args.latency_events, rate=args.rate)
            peer_rate = _rate(through) if bare else peer_rate
            print(_row(name, through=through, timed=timed, total=args.events, peer_rate=peer_rate), flush=True)


if __name__ == "__main__":
    main()
