"""`floorman rules --subscribe ... --publish ...`: the checker as a ZeroMQ service.

A SUB socket connects to the event endpoint (an edge, or the broker's backend) and subscribes to
``floorman/<table>/`` (or ``floorman/`` for every table). Each message must be two frames ``[topic, payload]``
with a JSON payload that `decode_event` accepts and a topic that matches it; anything else is counted and
logged (rate-limited), never raised. Alerts go out on a PUB socket as ``[b"floorman/<table>/alert", JSON]``.
Both sockets connect by default (to a broker); `bind_publish` binds the alert socket instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import zmq

from floorman.core.alerts import Alert
from floorman.core.errors import SchemaError
from floorman.core.events import TOPIC_ROOT, decode_event, event_topic
from floorman.rules.checker import RulesChecker

logger = logging.getLogger(__name__)

_LOG_FIRST = 10


@dataclass
class ServiceStats:
    """Counters since the service started."""

    received: int = 0
    events: int = 0
    malformed: int = 0
    foreign: int = 0
    alerts: int = 0


def subscription_prefix(table: str | None) -> str:
    """``floorman/<table>/``, or ``floorman/`` for every table."""
    return f"{TOPIC_ROOT}/" if table is None else f"{TOPIC_ROOT}/{table}/"


class RulesService:
    """Events in on a SUB socket, alerts out on a PUB socket."""

    def __init__(self, *, checker: RulesChecker, subscribe: str, publish: str, table: str | None = None,
                 bind_publish: bool = False) -> None:
        for name, endpoint in (("subscribe", subscribe), ("publish", publish)):
            if "://" not in endpoint:
                raise ValueError(f"{name}: expected a ZeroMQ endpoint such as tcp://127.0.0.1:5556, got {endpoint!r}")
        self.checker = checker
        self.subscribe_endpoint = subscribe
        self.publish_endpoint = publish
        self.table = table
        self.bind_publish = bind_publish
        self.prefix = subscription_prefix(table).encode()
        self.stats = ServiceStats()
        self._context: zmq.Context[zmq.Socket[bytes]] | None = None
        self._sub: zmq.Socket[bytes] | None = None
        self._pub: zmq.Socket[bytes] | None = None

    def start(self) -> RulesService:
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        sub = context.socket(zmq.SUB)
        sub.linger = 0
        sub.subscribe(self.prefix)
        sub.connect(self.subscribe_endpoint)
        pub = context.socket(zmq.PUB)
        pub.linger = 1000
        if self.bind_publish:
            pub.bind(self.publish_endpoint)
        else:
            pub.connect(self.publish_endpoint)
        self._context, self._sub, self._pub = context, sub, pub
        logger.info("rules service: events from %s (prefix %s), alerts to %s", self.subscribe_endpoint,
                    self.prefix.decode(), self.publish_endpoint)
        return self

    def close(self) -> None:
        for sock in (self._sub, self._pub):
            if sock is not None:
                sock.close()
        self._sub = self._pub = None
        if self._context is not None:
            self._context.term()
            self._context = None

    def __enter__(self) -> RulesService:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, *, stop: threading.Event | None = None, poll_ms: int = 100) -> ServiceStats:
        """Serve until `stop` is set (or forever)."""
        if self._sub is None:
            raise RuntimeError("the service is not started")
        while stop is None or not stop.is_set():
            if not self._sub.poll(poll_ms, zmq.POLLIN):
                continue
            while True:
                try:
                    frames = self._sub.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                self.publish(self.handle_message(frames))
        return self.stats

    def handle_message(self, frames: Sequence[bytes]) -> list[Alert]:
        """Check and decode one message, feed it to the checker; a bad message is counted, never raised."""
        self.stats.received += 1
        if len(frames) != 2:
            return self._drop("foreign", f"expected 2 frames [topic, payload], got {len(frames)}")
        topic, payload = bytes(frames[0]), bytes(frames[1])
        if not topic.startswith(self.prefix):
            return self._drop("foreign", f"topic {topic[:80]!r} is not under {self.prefix.decode()!r}")
        try:
            event = decode_event(payload)
        except (SchemaError, ValueError) as exc:
            return self._drop("malformed", f"topic {topic[:80]!r}: {exc}")
        if topic != event_topic(event.table_id, event.type).encode():
            return self._drop("foreign", f"topic {topic[:80]!r} does not match a {event.type} of {event.table_id}")
        self.stats.events += 1
        return self.checker.process(event)

    def publish(self, alerts: Sequence[Alert]) -> None:
        if not alerts:
            return
        if self._pub is None:
            raise RuntimeError("the service is not started")
        for alert in alerts:
            self._pub.send_multipart([event_topic(alert.table_id, "alert").encode(),
                                      alert.model_dump_json().encode()])
            self.stats.alerts += 1
            logger.info("alert %s: %s seat %s", alert.alert_id, alert.rule.value, alert.seat)

    def _drop(self, kind: str, reason: str) -> list[Alert]:
        count = self.stats.malformed + 1 if kind == "malformed" else self.stats.foreign + 1
        if kind == "malformed":
            self.stats.malformed = count
        else:
            self.stats.foreign = count
        if count <= _LOG_FIRST or count % 1000 == 0:
            logger.warning("dropped a %s message (%s so far): %s", kind, count, reason)
        return []
