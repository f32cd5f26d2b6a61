"""The edge's side of the bus: number each event, spool it, publish it; answer replay requests; send heartbeats.

One `EventPublisher` per (table, camera): its `seq` numbering goes on from the spool after a restart. The PUB
socket connects to the broker's frontend; a ROUTER socket, bound on `replay_endpoint`, answers
`ReplayRequest`s from the spool. A background thread serves the replays and sends a `Heartbeat` every
`heartbeat_interval` seconds. `publish` may be called from any thread (one lock orders seq, spool and wire).

Each heartbeat announces the replay endpoint (`advertise`, or the bound one) and its CURVE key, so that
consumers find it without configuration, and the publisher's `epoch`: it goes on from the spool's newest
heartbeat, and is new when the spool was lost (seq restarts at 0), so that consumers do not take the new
seq 0, 1, ... for duplicates. The same ROUTER socket serves `EvidenceRequest`s from an `EvidenceBuffer`.
"""

from __future__ import annotations

import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import zmq
from pydantic import ValidationError
from zmq.auth.thread import ThreadAuthenticator

from floorman.core.errors import SchemaError
from floorman.core.events import (
    EVENT_ADAPTER,
    CameraStatus,
    Event,
    EventBase,
    Heartbeat,
    decode_event,
    encode_event,
    event_topic,
)
from floorman.edge.bus import (
    MAX_REPLAY_EVENTS,
    EvidenceRequest,
    EvidenceResponse,
    PublisherKey,
    ReplayRequest,
    ReplayResponse,
    check_endpoint,
)
from floorman.edge.evidence import EvidenceBuffer
from floorman.edge.keys import (
    AllowList,
    KeyPair,
    close_context,
    load_allow_list,
    load_keypair,
    load_public_key,
    make_client,
    make_server,
)
from floorman.edge.spool import Spool

logger = logging.getLogger(__name__)

REPLAY_DOMAIN = "floorman-replay"
HWM = 100_000  # events queued toward the broker before PUB drops (the spool still has them)
EPOCH_LOOKBACK = 2000  # newest spooled events searched for the last heartbeat's epoch


@dataclass(frozen=True)
class Health:
    """What the next heartbeat reports; the pipeline replaces it as it measures."""

    status: CameraStatus = CameraStatus.ONLINE
    fps: float = 0.0
    latency_ms: float = 0.0
    frames_dropped: int = 0


@dataclass
class PublisherStats:
    """Counters of a publisher since it started."""

    published: int = 0
    heartbeats: int = 0
    replay_requests: int = 0
    replayed_events: int = 0
    bad_requests: int = 0


@dataclass(frozen=True)
class PublisherSecurity:
    """CURVE settings of an edge: its keypair (also the replay socket's server key), the broker's public key, and
    the consumers allowed to ask for replays (None: any consumer that knows the edge's public key)."""

    keys: KeyPair
    broker_key: bytes
    consumer_keys: frozenset[bytes] | None = None

    @classmethod
    def from_files(cls, *, keys: str | Path, broker: str | Path,
                   consumers: str | Path | None = None) -> PublisherSecurity:
        """From the edge's secret certificate, the broker's certificate and a folder of consumers' certificates."""
        return cls(keys=load_keypair(keys), broker_key=load_public_key(broker),
                   consumer_keys=None if consumers is None else load_allow_list(consumers))


def new_epoch() -> int:
    """A fresh epoch: milliseconds since 1970 (a later start has a larger one) and three random digits (two
    starts within one millisecond differ)."""
    return int(time.time() * 1000) * 1000 + secrets.randbelow(1000)


def spooled_epoch(spool: Spool, key: PublisherKey, bounds: tuple[int, int] | None) -> int | None:
    """The epoch of the newest heartbeat in the spool (the numbering goes on from it), None if there is none."""
    if bounds is None:
        return None
    rows = spool.read(key, first_seq=max(bounds[0], bounds[1] - EPOCH_LOOKBACK), last_seq=bounds[1],
                      limit=EPOCH_LOOKBACK + 1)
    for row in reversed(rows):
        try:
            event = decode_event(row.payload)
        except SchemaError:
            continue
        if isinstance(event, Heartbeat) and event.epoch is not None:
            return event.epoch
    return None


def reachable(endpoint: str) -> str:
    """A bound endpoint as others can connect to it: a wildcard host becomes this machine's name."""
    scheme, _, rest = endpoint.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme == "tcp" and host in ("0.0.0.0", "[::]", "*", "::"):
        return f"tcp://{socket.gethostname()}:{port}"
    return endpoint


class EventPublisher:
    """Numbers, spools and publishes the events of one (table, camera); serves replays and heartbeats."""

    def __init__(self, key: PublisherKey, *, broker: str, replay: str, spool: Spool,
                 security: PublisherSecurity | None = None, heartbeat_interval: float = 1.0,
                 clock: Callable[[], float] = time.time, advertise: str | None = None,
                 evidence: EvidenceBuffer | None = None) -> None:
        if heartbeat_interval <= 0:
            raise ValueError(f"expected heartbeat_interval > 0, got {heartbeat_interval}")
        self.key = key
        self.broker = check_endpoint(broker, bind=False, name="broker")
        self._replay_spec = check_endpoint(replay, bind=True, name="replay")
        self.replay_endpoint = ""
        self.spool = spool
        self.security = security
        self.heartbeat_interval = heartbeat_interval
        self.clock = clock
        self.health = Health()
        self.stats = PublisherStats()
        self.advertise = None if advertise is None else check_endpoint(advertise, bind=False, name="advertise")
        self.evidence = evidence
        bounds = spool.bounds(key)
        self._next_seq = 0 if bounds is None else bounds[1] + 1
        self.epoch = spooled_epoch(spool, key, bounds) or new_epoch()
        self._last_frame = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._context: zmq.Context[zmq.Socket[bytes]] | None = None
        self._pub: zmq.Socket[bytes] | None = None
        self._auth: ThreadAuthenticator | None = None
        self._thread: threading.Thread | None = None

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def start(self) -> EventPublisher:
        """Connect to the broker, bind the replay socket, start the replay/heartbeat thread."""
        if self._thread is not None:
            raise RuntimeError("the publisher is already running")
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self._context = context
        pub = context.socket(zmq.PUB)
        router = context.socket(zmq.ROUTER)
        for sock in (pub, router):
            sock.linger = 0
        pub.sndhwm = HWM
        if self.security is not None:
            self._secure(pub, router, security=self.security, context=context)
        try:
            router.bind(self._replay_spec)
        except zmq.ZMQError as exc:
            pub.close()
            router.close()
            self._close_context()
            raise OSError(f"cannot bind the replay endpoint {self._replay_spec}: {exc}") from None
        pub.connect(self.broker)
        self._pub = pub
        self.replay_endpoint = str(router.get_string(zmq.LAST_ENDPOINT))
        self.advertised = self.advertise or reachable(self.replay_endpoint)
        self.heartbeat()  # the first one at once, before any event: the consumers know the edge is up
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, args=(router,), name=f"floorman-replay-{self.key}",
                                        daemon=True)
        self._thread.start()
        logger.info("publisher %s: -> %s, replays on %s, seq from %s", self.key, self.broker, self.replay_endpoint,
                    self._next_seq - 1)
        return self

    def _secure(self, pub: zmq.Socket[bytes], router: zmq.Socket[bytes], *, security: PublisherSecurity,
                context: zmq.Context[zmq.Socket[bytes]]) -> None:
        """PUB: CURVE client of the broker. ROUTER: CURVE server, its clients checked by a ZAP authenticator."""
        make_client(pub, security.keys, server_key=security.broker_key)
        self._auth = ThreadAuthenticator(context)
        self._auth.start()
        self._auth.configure_curve_callback(REPLAY_DOMAIN, AllowList(security.consumer_keys,
                                                                     side=f"replay of {self.key}"))
        make_server(router, security.keys, domain=REPLAY_DOMAIN)

    def publish(self, event: EventBase) -> Event:
        """Give `event` the next seq, spool it and send it; return the numbered event."""
        if (event.table_id, event.camera_id) != (self.key.table_id, self.key.camera_id):
            raise ValueError(f"expected an event of {self.key}, got one of {event.table_id}/{event.camera_id}")
        with self._lock:
            if self._pub is None:
                raise RuntimeError("the publisher is not started")
            numbered = EVENT_ADAPTER.validate_python(event.model_copy(update={"seq": self._next_seq}))
            payload = encode_event(numbered)
            self.spool.append(self.key, seq=numbered.seq, payload=payload)
            self._next_seq += 1
            self._last_frame = numbered.frame
            self._pub.send_multipart([event_topic(self.key.table_id, numbered.type).encode(), payload])
            self.stats.published += 1
        return numbered

    def heartbeat(self) -> Event:
        """Publish a Heartbeat with the current `health` (numbered like any event)."""
        health = self.health
        public = self.security.keys.public.decode("ascii") if self.security is not None else None
        beat = Heartbeat(table_id=self.key.table_id, camera_id=self.key.camera_id, seq=0, t=self.clock(),
                         frame=self._last_frame, status=health.status, fps=health.fps,
                         latency_ms=health.latency_ms, frames_dropped=health.frames_dropped, epoch=self.epoch,
                         replay_endpoint=self.advertised or None, replay_key=public)
        self.stats.heartbeats += 1
        return self.publish(beat)

    def _serve(self, router: zmq.Socket[bytes]) -> None:
        poller = zmq.Poller()
        poller.register(router, zmq.POLLIN)
        next_beat = time.monotonic() + self.heartbeat_interval
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= next_beat:
                    self.heartbeat()
                    next_beat = now + self.heartbeat_interval
                wait_ms = max(0, min(100, int((next_beat - now) * 1000)))
                if poller.poll(wait_ms):
                    self._answer(router, router.recv_multipart())
        except zmq.ZMQError as exc:
            logger.error("publisher %s: replay thread stopped: %s", self.key, exc)
        finally:
            router.close()

    def _answer(self, router: zmq.Socket[bytes], frames: list[bytes]) -> None:
        identity, envelope, body = frames[0], frames[1:-1], frames[-1]
        if self.evidence is not None and b'"kind"' in body:
            self._answer_evidence(router, identity, envelope, body)
            return
        self.stats.replay_requests += 1
        try:
            request = ReplayRequest.model_validate_json(body)
        except ValidationError as exc:
            self.stats.bad_requests += 1
            logger.warning("publisher %s: bad replay request: %s", self.key, exc.errors()[0]["msg"])
            response = ReplayResponse(request_id=0, table_id=self.key.table_id, camera_id=self.key.camera_id,
                                      oldest_seq=None, newest_seq=None, error="invalid replay request")
        else:
            response = self.replay(request)
        router.send_multipart([identity, *envelope, response.model_dump_json().encode()])

    def _answer_evidence(self, router: zmq.Socket[bytes], identity: bytes, envelope: list[bytes],
                         body: bytes) -> None:
        assert self.evidence is not None
        try:
            request = EvidenceRequest.model_validate_json(body)
        except ValidationError as exc:
            self.stats.bad_requests += 1
            logger.warning("publisher %s: bad evidence request: %s", self.key, exc.errors()[0]["msg"])
            response = EvidenceResponse(request_id=0, table_id=self.key.table_id, camera_id=self.key.camera_id,
                                        error="invalid evidence request")
            jpeg = b""
        else:
            response, jpeg = self.evidence.answer(request, key=self.key)
        router.send_multipart([identity, *envelope, response.model_dump_json().encode(), jpeg])

    def replay(self, request: ReplayRequest) -> ReplayResponse:
        """The answer to a replay request, from the spool (at most MAX_REPLAY_EVENTS events)."""
        base = {"request_id": request.request_id, "table_id": self.key.table_id, "camera_id": self.key.camera_id}
        if (request.table_id, request.camera_id) != (self.key.table_id, self.key.camera_id):
            return ReplayResponse(**base, oldest_seq=None, newest_seq=None,
                                  error=f"this endpoint serves {self.key}, not {request.table_id}/{request.camera_id}")
        bounds = self.spool.bounds(self.key)
        if bounds is None or request.first_seq > request.last_seq:
            return ReplayResponse(**base, oldest_seq=None if bounds is None else bounds[0],
                                  newest_seq=None if bounds is None else bounds[1])
        rows = self.spool.read(self.key, first_seq=request.first_seq, last_seq=request.last_seq,
                               limit=MAX_REPLAY_EVENTS)
        events = tuple(decode_event(row.payload) for row in rows)
        self.stats.replayed_events += len(events)
        return ReplayResponse(**base, oldest_seq=bounds[0], newest_seq=bounds[1], events=events)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the replay/heartbeat thread and close the sockets (the spool stays open: the caller owns it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._lock:
            if self._pub is not None:
                self._pub.close()
                self._pub = None
        self._close_context()

    def _close_context(self) -> None:
        close_context(self._context, self._auth)
        self._context, self._auth = None, None

    def __enter__(self) -> EventPublisher:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
