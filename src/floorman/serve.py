"""`floorman rules --subscribe ... --publish ...`: the rules checker on the event bus.

The wiring of two packages that do not know each other (DESIGN.md layers: rules sees only core): events come
in through the bus's `EventSubscriber` (floorman.edge.subscriber: message checks, gap detection and replay,
each event exactly once and in seq order per publisher), go through `CheckerService` (floorman.rules.service:
the checker of every table and the tournament's sanction register), and the alerts go out on a PUB socket as
``[b"floorman/<table>/alert", JSON]``. The PUB socket connects (to the broker's frontend, say) or, with
`bind_publish`, binds.

When the alerts go to the same broker the events come from, the subscriber (subscribed to
``floorman/<table>/``) receives them too. `EventsOnly` leaves them out before the event checks, so they are
counted as `alerts_skipped`, not as malformed events.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import zmq

from floorman.core.alerts import Alert
from floorman.core.errors import ConfigError
from floorman.core.events import Event
from floorman.edge.bus import PublisherKey, ReplayTarget, check_endpoint
from floorman.edge.keys import make_client
from floorman.edge.subscriber import EventSubscriber, SubscriberSecurity, SubscriberStats
from floorman.rules.cli import register_commands
from floorman.rules.rulebook import SHIPPED_RULEBOOKS, load_rulebook
from floorman.rules.service import CheckerService, CheckerStats, alert_message, is_alert_topic

logger = logging.getLogger(__name__)

REGISTER_CHECK_S = 1.0
"""How often the director's register file is looked at for changes, seconds."""


class EventsOnly(EventSubscriber):
    """The bus subscriber, leaving alone the alerts published on the same broker (they are not events)."""

    alerts_skipped = 0

    def handle_message(self, frames: Sequence[bytes]) -> list[Event]:
        if len(frames) == 2 and is_alert_topic(bytes(frames[0])):
            self.alerts_skipped += 1
            return []
        return super().handle_message(frames)


@dataclass(frozen=True)
class ServiceStats:
    """The subscriber's counters, the checker's, and the alerts sent."""

    bus: SubscriberStats
    checker: CheckerStats
    alerts_skipped: int
    published: int


class RulesService:
    """Events from the bus (gap-filled, ordered, once) through the checker; alerts out on a PUB socket."""

    def __init__(self, *, core: CheckerService, subscribe: str, publish: str, table: str | None = None,
                 bind_publish: bool = False, replay: Mapping[PublisherKey | str, ReplayTarget] | None = None,
                 replay_timeout: float = 1.0, discovery_wait: float = 3.0,
                 security: SubscriberSecurity | None = None) -> None:
        self.core = core
        self.security = security
        self.publish_endpoint = check_endpoint(publish, bind=bind_publish, name="publish")
        self.bind_publish = bind_publish
        self.subscriber = EventsOnly(subscribe, tables=None if table is None else [table], replay=replay,
                                     replay_timeout=replay_timeout, discovery_wait=discovery_wait,
                                     security=security)
        self.published = 0
        self._context: zmq.Context[zmq.Socket[bytes]] | None = None
        self._pub: zmq.Socket[bytes] | None = None
        self._register_checked = 0.0

    @property
    def stats(self) -> ServiceStats:
        return ServiceStats(bus=self.subscriber.stats, checker=self.core.stats,
                            alerts_skipped=self.subscriber.alerts_skipped, published=self.published)

    def start(self) -> RulesService:
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        pub = context.socket(zmq.PUB)
        pub.linger = 1000
        if self.security is not None and not self.bind_publish:  # alerts into a CURVE broker's frontend
            make_client(pub, self.security.keys, server_key=self.security.broker_key)
        try:
            if self.bind_publish:
                pub.bind(self.publish_endpoint)
            else:
                pub.connect(self.publish_endpoint)
        except zmq.ZMQError:
            pub.close()
            context.term()
            raise
        self._context, self._pub = context, pub
        self.subscriber.start()
        logger.info("rules service: events from %s, alerts to %s", self.subscriber.broker, self.publish_endpoint)
        return self

    def close(self) -> None:
        self.subscriber.close()
        if self._pub is not None:
            self._pub.close()
            self._pub = None
        if self._context is not None:
            self._context.term()
            self._context = None

    def __enter__(self) -> RulesService:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def step(self, timeout: float = 0.1) -> list[Alert]:
        """Wait up to `timeout` seconds for events, check the ones ready, publish their alerts."""
        alerts = self.core.feed(self.subscriber.poll(timeout))
        self.publish(alerts)
        now = self.subscriber.clock()
        if now - self._register_checked >= REGISTER_CHECK_S:
            self._register_checked = now
            self.core.refresh_register()
        return alerts

    def run(self, *, stop: threading.Event | None = None, timeout: float = 0.1) -> ServiceStats:
        """Serve until `stop` is set (or forever)."""
        while stop is None or not stop.is_set():
            self.step(timeout)
        return self.stats

    def publish(self, alerts: Sequence[Alert]) -> None:
        if not alerts:
            return
        if self._pub is None:
            raise RuntimeError("the service is not started")
        for alert in alerts:
            self._pub.send_multipart(alert_message(alert))
            self.published += 1
            logger.info("alert %s: %s seat %s (%s)", alert.alert_id, alert.rule.value, alert.seat, alert.sanction)


def replay_targets(values: Sequence[str], *, table: str | None) -> dict[PublisherKey | str, ReplayTarget]:
    """``TABLE=ENDPOINT`` (or a bare ENDPOINT for `table`) -> {table: ReplayTarget}; ValueError when malformed."""
    targets: dict[PublisherKey | str, ReplayTarget] = {}
    for value in values:
        name, sep, endpoint = value.partition("=")
        if not sep or "://" in name:
            if table is None:
                raise ValueError(f"--replay: expected TABLE=ENDPOINT (or --table T), got {value!r}")
            name, endpoint = table, value
        if not name:
            raise ValueError(f"--replay: expected a table id before '=', got {value!r}")
        targets[name] = ReplayTarget(endpoint)
    return targets


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `floorman ruling` and `floorman rules` (with the service's options)."""
    rules = register_commands(subparsers)
    rules.add_argument("--subscribe", metavar="ENDPOINT", help="event endpoint to connect to (the broker's "
                       "backend, or an edge), e.g. tcp://127.0.0.1:5551")
    rules.add_argument("--publish", metavar="ENDPOINT", help="endpoint of the alert PUB socket (connected, e.g. "
                       "to the broker's frontend; --publish-bind binds it)")
    rules.add_argument("--publish-bind", action="store_true", help="bind the alert socket instead of connecting")
    rules.add_argument("--rulebook", metavar="R", default=None, help=f"rulebook id ({', '.join(SHIPPED_RULEBOOKS)}) "
                       "or path to a rulebook YAML")
    rules.add_argument("--table", metavar="T", default=None, help="check this table only (default: every table)")
    rules.add_argument("--replay", metavar="[TABLE=]ENDPOINT", action="append", default=[],
                       help="where a table's edge answers replay requests, to fill gaps (repeatable; a bare "
                       "ENDPOINT is for --table). Without one, the endpoint the edge announces in its heartbeats "
                       "is used; a gap seen before any heartbeat waits up to --discovery-wait seconds for one")
    rules.add_argument("--discovery-wait", metavar="S", type=float, default=3.0,
                       help="seconds a gap may wait for the edge's heartbeat to announce its replay endpoint "
                       "(default: %(default)s; 0 counts such a gap lost at once)")
    rules.add_argument("--keys", metavar="FILE.key_secret", type=Path, default=None,
                       help="this service's secret certificate: CURVE to the broker (needs --broker-key; the broker "
                       "must allow its public key to publish alerts)")
    rules.add_argument("--broker-key", metavar="FILE.key", type=Path, default=None,
                       help="the broker's public certificate")
    rules.add_argument("--tournament", metavar="ID", default="tournament",
                       help="tournament id of the sanction register (default: %(default)s)")
    rules.add_argument("--register", metavar="FILE.json", type=Path, default=None,
                       help="the director's sanction register (JSON), read at start and whenever it changes: "
                       "the suggested sanctions climb the ladder on what he recorded (never written here)")
    rules.set_defaults(handler=run_service)


def _security(args: argparse.Namespace) -> SubscriberSecurity | None:
    if (args.keys is None) != (args.broker_key is None):
        raise ConfigError("expected both --keys and --broker-key for CURVE, or neither",
                          field="--keys" if args.keys is None else "--broker-key")
    if args.keys is None or args.broker_key is None:
        return None
    return SubscriberSecurity.from_files(keys=args.keys, broker=args.broker_key)


def run_service(args: argparse.Namespace) -> int:
    if not args.subscribe or not args.publish or not args.rulebook:
        sys.stderr.write("floorman rules: expected --subscribe, --publish and --rulebook to run the checker, or a "
                         "subcommand (list, check, check-truth)\n")
        return 2
    try:
        targets = replay_targets(args.replay, table=args.table)
        core = CheckerService(rulebook=load_rulebook(args.rulebook), tournament_id=args.tournament,
                              register_path=args.register)
        service = RulesService(core=core, subscribe=args.subscribe, publish=args.publish, table=args.table,
                               bind_publish=args.publish_bind, replay=targets, discovery_wait=args.discovery_wait,
                               security=_security(args))
    except ValueError as exc:
        sys.stderr.write(f"floorman rules: {exc}\n")
        return 2
    with service:
        try:
            service.run()
        except KeyboardInterrupt:
            pass
    stats = service.stats
    sys.stdout.write(f"events {stats.checker.events}, alerts {stats.published}, gaps {stats.bus.gaps}, "
                     f"replayed {stats.bus.replayed}, lost {stats.bus.lost}, malformed {stats.bus.malformed}, "
                     f"foreign {stats.bus.foreign}, alerts skipped {stats.alerts_skipped}\n")
    return 0
