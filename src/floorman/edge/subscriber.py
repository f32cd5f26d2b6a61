"""The consumer's side of the bus: every event of every publisher exactly once, in seq order.

`EventSubscriber` connects a SUB socket to the broker's backend and subscribes to ``floorman/<table>/`` (or
every table). Each message is checked (two frames, our topic, a valid event whose topic matches); anything
else is counted and dropped, never raised. Events are handed out per publisher (table, camera) in `seq`
order: an arrival past the next expected seq opens a gap, later arrivals wait in a buffer while the gap is
asked of the publisher's replay endpoint (`ReplayRequest` on a DEALER socket), and duplicates are dropped.
Events the publisher's spool no longer holds are counted as lost and skipped. A publisher from which nothing
(not even a heartbeat) arrived for `offline_after` seconds is marked offline.

Heartbeats announce each publisher's replay endpoint: a publisher without a configured `replay` target is
asked there. A heartbeat with a new `epoch` means the publisher lost its spool and numbers from 0 again: the
subscriber forgets what it buffered of the old numbering and expects seq 0 (asking for the gap up to the
heartbeat). Heartbeats without an epoch (older publishers) change nothing.

The application calls `poll(timeout)` in its loop and gets the events ready for it; `handle_message(frames)`
is the same path without a socket.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import zmq
from pydantic import ValidationError

from floorman.core.errors import SchemaError
from floorman.core.events import TOPIC_ROOT, Event, Heartbeat, decode_event, event_topic
from floorman.edge.bus import PublisherKey, ReplayRequest, ReplayResponse, ReplayTarget, check_endpoint, topic_prefix
from floorman.edge.keys import KeyPair, load_keypair, load_public_key, make_client

logger = logging.getLogger(__name__)

_TOPIC_START = f"{TOPIC_ROOT}/".encode()
HWM = 100_000
MAX_BATCH = 10_000  # messages read per poll, so that a flood cannot keep poll from returning


@dataclass
class SubscriberStats:
    """Counters of a subscriber since it started."""

    received: int = 0
    accepted: int = 0
    delivered: int = 0
    malformed: int = 0
    foreign: int = 0
    duplicates: int = 0
    gaps: int = 0
    replay_requests: int = 0
    replay_failures: int = 0
    replayed: int = 0
    lost: int = 0
    epochs: int = 0
    discovered: int = 0


@dataclass(frozen=True)
class SubscriberSecurity:
    """CURVE settings of a consumer: its keypair and the broker's public key."""

    keys: KeyPair
    broker_key: bytes

    @classmethod
    def from_files(cls, *, keys: str | Path, broker: str | Path) -> SubscriberSecurity:
        """From the consumer's secret certificate and the broker's (public) certificate."""
        return cls(keys=load_keypair(keys), broker_key=load_public_key(broker))


@dataclass(frozen=True)
class PublisherStatus:
    """What a subscriber knows of one publisher."""

    key: PublisherKey
    online: bool
    last_seq: int
    buffered: int
    seconds_since_seen: float


@dataclass
class _Publisher:
    key: PublisherKey
    next_seq: int
    last_seen: float
    online: bool = True
    buffer: dict[int, Event] = field(default_factory=dict)
    gap_since: float | None = None
    retry_at: float = 0.0
    epoch: int | None = None
    heard: bool = False  # a heartbeat came from it


class EventSubscriber:
    """Gap-filling, ordering, deduplicating subscriber of the floorman bus."""

    def __init__(self, broker: str, *, tables: Sequence[str] | None = None,
                 replay: Mapping[PublisherKey | str, ReplayTarget] | None = None,
                 security: SubscriberSecurity | None = None, resume: Mapping[PublisherKey, int] | None = None,
                 start: Literal["earliest", "latest"] = "earliest", offline_after: float = 5.0,
                 replay_timeout: float = 1.0, give_up_after: float = 30.0, max_buffer: int = 100_000,
                 clock: Callable[[], float] = time.monotonic, discovery_wait: float = 0.0) -> None:
        if offline_after <= 0 or replay_timeout <= 0 or give_up_after <= 0 or max_buffer < 1:
            raise ValueError("expected offline_after, replay_timeout, give_up_after > 0 and max_buffer >= 1, got "
                             f"{offline_after}, {replay_timeout}, {give_up_after}, {max_buffer}")
        self.broker = check_endpoint(broker, bind=False, name="broker")
        self.prefixes = [topic_prefix(t) for t in tables] if tables else [topic_prefix()]
        self.replay_targets = dict(replay or {})
        self.security = security
        self.resume = dict(resume or {})
        self.start_at = start
        self.offline_after = offline_after
        self.replay_timeout = replay_timeout
        self.give_up_after = give_up_after
        self.max_buffer = max_buffer
        self.discovery_wait = max(0.0, discovery_wait)
        """How long a gap before a publisher's first heartbeat waits for it to say where to ask for replays
        (0: skip such a gap at once, as when no endpoint is known)."""
        self.clock = clock
        self.stats = SubscriberStats()
        self._publishers: dict[PublisherKey, _Publisher] = {}
        self._request_ids = itertools.count(1)
        self._context: zmq.Context[zmq.Socket[bytes]] | None = None
        self._sub: zmq.Socket[bytes] | None = None
        self._dealers: dict[ReplayTarget, zmq.Socket[bytes]] = {}
        self._discovered: dict[PublisherKey, ReplayTarget] = {}

    # -- sockets -------------------------------------------------------------------------------------------

    def start(self) -> EventSubscriber:
        """Connect to the broker's backend and subscribe."""
        if self._sub is not None:
            raise RuntimeError("the subscriber is already running")
        self._context = zmq.Context()
        sub = self._context.socket(zmq.SUB)
        sub.linger = 0
        sub.rcvhwm = HWM
        if self.security is not None:
            make_client(sub, self.security.keys, server_key=self.security.broker_key)
        for prefix in self.prefixes:
            sub.subscribe(prefix)
        sub.connect(self.broker)
        self._sub = sub
        return self

    def close(self) -> None:
        """Close every socket."""
        for dealer in self._dealers.values():
            dealer.close()
        self._dealers.clear()
        if self._sub is not None:
            self._sub.close()
            self._sub = None
        if self._context is not None:
            self._context.term()
            self._context = None

    def __enter__(self) -> EventSubscriber:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def poll(self, timeout: float = 0.1) -> list[Event]:
        """Wait up to `timeout` seconds for messages; return the events now ready, in order per publisher."""
        if self._sub is None:
            raise RuntimeError("the subscriber is not started")
        ready: list[Event] = []
        if self._sub.poll(int(timeout * 1000), zmq.POLLIN):
            for _ in range(MAX_BATCH):
                try:
                    frames = self._sub.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                ready.extend(self.handle_message(frames))
        ready.extend(self._fill_gaps())
        self._check_offline()
        return ready

    # -- the decoder path --------------------------------------------------------------------------------------

    def handle_message(self, frames: Sequence[bytes]) -> list[Event]:
        """Check and sequence one multipart message; return the events it makes ready (often one, maybe none)."""
        self.stats.received += 1
        if len(frames) != 2:
            return self._drop("foreign", f"expected 2 frames [topic, payload], got {len(frames)}")
        topic, payload = bytes(frames[0]), bytes(frames[1])
        if not topic.startswith(_TOPIC_START):
            return self._drop("foreign", f"topic {topic[:80]!r} is not ours")
        try:
            event = decode_event(payload)
        except (SchemaError, ValueError) as exc:
            return self._drop("malformed", f"topic {topic[:80]!r}: {exc}")
        if topic != event_topic(event.table_id, event.type).encode():
            return self._drop("foreign", f"topic {topic[:80]!r} does not match a {event.type} of {event.table_id}")
        self.stats.accepted += 1
        return self._accept(event, replayed=False)

    def _drop(self, kind: Literal["malformed", "foreign"], reason: str) -> list[Event]:
        count = getattr(self.stats, kind) + 1
        setattr(self.stats, kind, count)
        if count <= 10 or count % 1000 == 0:
            logger.warning("dropped a %s message (%s so far): %s", kind, count, reason)
        return []

    def _accept(self, event: Event, *, replayed: bool) -> list[Event]:
        key = PublisherKey(event.table_id, event.camera_id)
        now = self.clock()
        state = self._publishers.get(key)
        if state is None:
            state = self._publishers[key] = _Publisher(key, next_seq=self._first_seq(key, event.seq), last_seen=now)
            logger.info("publisher %s: first event seq %s, expecting seq %s", key, event.seq, state.next_seq)
        if not replayed:
            state.last_seen = now
            if not state.online:
                state.online = True
                logger.info("publisher %s is back online", key)
            if isinstance(event, Heartbeat):
                self._heartbeat(state, event)
        if event.seq < state.next_seq or event.seq in state.buffer:
            self.stats.duplicates += 1
            return []
        self.stats.replayed += replayed
        state.buffer[event.seq] = event
        ready = self._release(state)
        if len(state.buffer) > self.max_buffer:
            ready.extend(self._skip_gap(state, reason=f"more than {self.max_buffer} events waiting"))
        return ready

    def _heartbeat(self, state: _Publisher, beat: Heartbeat) -> None:
        """Learn the publisher's replay endpoint; on a new epoch, start its numbering again from 0."""
        state.heard = True
        known = self._discovered.get(state.key)
        if beat.replay_endpoint is not None and (known is None or known.endpoint != beat.replay_endpoint):
            self._discover(state.key, beat)
        if beat.epoch is None:
            return
        if state.epoch is not None and beat.epoch != state.epoch:
            self.stats.epochs += 1
            logger.warning("publisher %s restarted with a new epoch (%s -> %s): its seq starts again at 0",
                           state.key, state.epoch, beat.epoch)
            state.buffer.clear()
            state.next_seq = 0
            state.gap_since = None
        state.epoch = beat.epoch

    def _discover(self, key: PublisherKey, beat: Heartbeat) -> None:
        endpoint = beat.replay_endpoint or ""
        server_key = beat.replay_key.encode("ascii") if beat.replay_key is not None else None
        try:
            target = ReplayTarget(endpoint, server_key=server_key)
        except ValueError as exc:
            self._drop("malformed", f"heartbeat of {key} announces a bad replay endpoint: {exc}")
            return
        self._discovered[key] = target
        self.stats.discovered += 1
        logger.info("publisher %s answers replays on %s", key, endpoint)

    def _first_seq(self, key: PublisherKey, seq: int) -> int:
        if key in self.resume:
            return self.resume[key] + 1
        return 0 if self.start_at == "earliest" else seq

    def _release(self, state: _Publisher) -> list[Event]:
        ready: list[Event] = []
        while state.next_seq in state.buffer:
            ready.append(state.buffer.pop(state.next_seq))
            state.next_seq += 1
        if not state.buffer:
            state.gap_since = None
        elif state.gap_since is None:
            state.gap_since = state.retry_at = self.clock()
            self.stats.gaps += 1
            logger.info("publisher %s: gap from seq %s to %s", state.key, state.next_seq, min(state.buffer) - 1)
        self.stats.delivered += len(ready)
        return ready

    def _skip_gap(self, state: _Publisher, *, reason: str, up_to: int | None = None) -> list[Event]:
        """Give up on the seqs before `up_to` (default: the first buffered one): count them lost, release."""
        target = min(state.buffer) if up_to is None else up_to
        if target > state.next_seq:
            self.stats.lost += target - state.next_seq
            logger.warning("publisher %s: events %s..%s lost (%s)", state.key, state.next_seq, target - 1, reason)
            for seq in [s for s in state.buffer if s < target]:
                del state.buffer[seq]
            state.next_seq = target
        state.gap_since = None
        return self._release(state)

    # -- gaps and health -----------------------------------------------------------------------------------

    def _fill_gaps(self) -> list[Event]:
        ready: list[Event] = []
        for state in list(self._publishers.values()):
            for _ in range(1000):
                now = self.clock()
                if not state.buffer or now < state.retry_at:
                    break
                if state.gap_since is not None and now - state.gap_since > self.give_up_after:
                    ready.extend(self._skip_gap(state, reason=f"no replay within {self.give_up_after} s"))
                    break
                released, progress = self._ask(state)
                ready.extend(released)
                if not progress:
                    state.retry_at = now + self.replay_timeout
                    break
        return ready

    def _target(self, key: PublisherKey) -> ReplayTarget | None:
        return self.replay_targets.get(key) or self.replay_targets.get(key.table_id) or self._discovered.get(key)

    def _ask(self, state: _Publisher) -> tuple[list[Event], bool]:
        """One replay request for the gap of `state`; (events released, whether the gap shrank)."""
        target = self._target(state.key)
        if target is None:
            waited = self.clock() - (state.gap_since or self.clock())
            if not state.heard and waited < min(self.discovery_wait, self.give_up_after):
                return [], False  # its first heartbeat (which announces where to ask) may be on its way
            # One PUB-SUB path keeps order, so with nowhere to ask, the missing events will not come.
            return self._skip_gap(state, reason="no replay endpoint known for this publisher"), True
        request = ReplayRequest(request_id=next(self._request_ids), table_id=state.key.table_id,
                                camera_id=state.key.camera_id, first_seq=state.next_seq,
                                last_seq=min(state.buffer) - 1)
        self.stats.replay_requests += 1
        response = self._request(target, request)
        if response is None or response.error is not None:
            self.stats.replay_failures += 1
            logger.warning("publisher %s: replay of %s..%s failed: %s", state.key, request.first_seq,
                           request.last_seq, "no answer" if response is None else response.error)
            return [], False
        before = state.next_seq
        ready: list[Event] = []
        oldest = response.oldest_seq
        if oldest is None or oldest > state.next_seq:
            # The spool no longer holds (or never held) the start of the gap: that part is gone for good.
            gone_to = min(state.buffer) if oldest is None else min(oldest, min(state.buffer))
            ready.extend(self._skip_gap(state, reason="no longer in the publisher's spool", up_to=gone_to))
        for event in response.events:
            if PublisherKey(event.table_id, event.camera_id) == state.key:
                ready.extend(self._accept(event, replayed=True))
        return ready, state.next_seq > before

    def _dealer(self, target: ReplayTarget) -> zmq.Socket[bytes]:
        dealer = self._dealers.get(target)
        if dealer is None:
            if self._context is None:
                raise RuntimeError("the subscriber is not started")
            dealer = self._context.socket(zmq.DEALER)
            dealer.linger = 0
            if self.security is not None and target.server_key is not None:
                make_client(dealer, self.security.keys, server_key=target.server_key)
            dealer.connect(target.endpoint)
            self._dealers[target] = dealer
        return dealer

    def _request(self, target: ReplayTarget, request: ReplayRequest) -> ReplayResponse | None:
        """Send one request and wait up to `replay_timeout` for its answer; on silence, drop the socket (so that
        no request piles up behind a dead publisher) and answer None."""
        dealer = self._dealer(target)
        try:
            dealer.send_multipart([b"", request.model_dump_json().encode()], zmq.NOBLOCK)
        except zmq.Again:
            self._forget(target)
            return None
        deadline = time.monotonic() + self.replay_timeout
        while (left := deadline - time.monotonic()) > 0:
            if not dealer.poll(max(1, int(left * 1000)), zmq.POLLIN):
                break
            frames = dealer.recv_multipart()
            try:
                response = ReplayResponse.model_validate_json(frames[-1])
            except ValidationError:
                self._drop("malformed", f"bad replay response from {target.endpoint}")
                continue
            if response.request_id == request.request_id:
                return response
        self._forget(target)
        return None

    def _forget(self, target: ReplayTarget) -> None:
        dealer = self._dealers.pop(target, None)
        if dealer is not None:
            dealer.close()

    def _check_offline(self) -> None:
        now = self.clock()
        for state in self._publishers.values():
            if state.online and now - state.last_seen > self.offline_after:
                state.online = False
                logger.warning("publisher %s is offline: nothing for %.1f s", state.key, now - state.last_seen)

    def publishers(self) -> list[PublisherStatus]:
        """The publishers seen so far, with their last delivered seq (pass it as `resume` after a restart)."""
        now = self.clock()
        return [PublisherStatus(key=s.key, online=s.online, last_seq=s.next_seq - 1, buffered=len(s.buffer),
                                seconds_since_seen=now - s.last_seen)
                for s in sorted(self._publishers.values(), key=lambda s: s.key)]

    def positions(self) -> dict[PublisherKey, int]:
        """Last delivered seq per publisher, for `resume=` of the next run."""
        return {s.key: s.next_seq - 1 for s in self._publishers.values()}
