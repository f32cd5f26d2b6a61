"""The rules checker as a service, without the transport: ordered events in, alert messages out.

The transport lives in `floorman.serve` (the bus's gap-filling `EventSubscriber` in, a PUB socket out): the rules
package does not know the bus. `CheckerService.feed(events)` takes the events a subscriber hands out (each
once, in seq order per publisher) and returns the alerts they raised. Heartbeats are the cameras' health, not
play: their `t` is the publisher's wall clock, which need not be the capture clock of the table events, so they
are counted and not given to the checker.

Sanctions: one `SanctionRegister` for the whole tournament (every table, every hand), so each alert carries the
ladder's suggestion for that seat and how many alerts of the rule the seat had so far. When the director keeps
the register as a JSON file (`register_path`), it is read at start and read again whenever it changes, so the
ladder climbs on the sanctions he recorded; the service never writes it (it suggests, it never applies).

`alert_message(alert)` is the bus message of an alert: ``[b"floorman/<table>/alert", JSON]``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from floorman.core.alerts import Alert
from floorman.core.errors import SchemaError
from floorman.core.events import EventBase, Heartbeat, event_topic
from floorman.rules.checker import RulesChecker
from floorman.rules.rulebook import Rulebook
from floorman.rules.sanctions import SanctionRegister

logger = logging.getLogger(__name__)

ALERT_TYPE = "alert"


def alert_message(alert: Alert) -> list[bytes]:
    """``[topic, payload]`` of an alert on the bus."""
    return [event_topic(alert.table_id, ALERT_TYPE).encode(), alert.model_dump_json().encode()]


def is_alert_topic(topic: bytes) -> bool:
    """Whether a bus topic is an alert's (``floorman/<table>/alert``), not an event's."""
    return topic.rpartition(b"/")[2] == ALERT_TYPE.encode()


@dataclass
class CheckerStats:
    """Counters of the checker side since the service started."""

    events: int = 0
    heartbeats: int = 0
    alerts: int = 0
    register_loads: int = 0


class CheckerService:
    """The checker of every table, one sanction register for the tournament, and the register file's reloads."""

    def __init__(self, *, rulebook: Rulebook, tournament_id: str = "tournament",
                 register_path: str | Path | None = None) -> None:
        self.register = SanctionRegister(rulebook=rulebook, tournament_id=tournament_id)
        self.checker = RulesChecker(rulebook=rulebook, register=self.register)
        self.register_path = None if register_path is None else Path(register_path)
        self.stats = CheckerStats()
        self._register_stamp: tuple[int, int] | None = None
        self.refresh_register()

    def feed(self, events: Iterable[EventBase]) -> list[Alert]:
        """The alerts raised by `events` (taken in the order given)."""
        alerts: list[Alert] = []
        process = self.checker.process
        for event in events:
            if isinstance(event, Heartbeat):
                self.stats.heartbeats += 1
                continue
            self.stats.events += 1
            alerts += process(event)
        self.stats.alerts += len(alerts)
        return alerts

    def refresh_register(self) -> bool:
        """Read the register file again if it changed since the last read; whether it was read.

        A file that cannot be read or parsed keeps the register as it was (logged); rejected entries are
        logged and left out."""
        path = self.register_path
        if path is None:
            return False
        try:
            stat = path.stat()
        except FileNotFoundError:
            return False
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._register_stamp:
            return False
        self._register_stamp = stamp
        try:
            loaded, rejected = SanctionRegister.load_lenient(path, rulebook=self.register.rulebook)
            self.register.replace_entries(loaded.entries)
        except (SchemaError, ValueError) as exc:
            logger.warning("sanction register %s not taken: %s", path, exc)
            return False
        self.stats.register_loads += 1
        logger.info("sanction register %s: %s entries (%s rejected)", path, len(loaded.entries), len(rejected))
        return True
