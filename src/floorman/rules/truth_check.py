"""Replay a scenario's truth events through the checker and score its alerts against the expected ones.

An expected alert (rule, seat, window) is met by an alert of the same rule and seat whose `raised_at` (the time
of the event that made the checker raise it) lies inside the window; each alert meets at most one expected
alert. Alerts cleared later (confidence 0) do not count. Precision is met alerts over raised alerts, recall met
expected over expected (both 1.0 when there is nothing to raise and nothing was raised).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from floorman.core.alerts import Alert, ExpectedAlert, TruthRecord
from floorman.core.events import EventBase
from floorman.rules.checker import RulesChecker
from floorman.rules.findings import CheckerSettings
from floorman.rules.rulebook import Rulebook


@dataclass(frozen=True)
class RaisedAlert:
    """An alert (its latest version) and when it was first raised (`Alert.raised_at`)."""

    alert: Alert
    raised_at: float


@dataclass(frozen=True)
class ExpectedOutcome:
    expected: ExpectedAlert
    met_by: RaisedAlert | None


@dataclass(frozen=True)
class TruthReport:
    """Per expected alert whether it was raised, every unexpected alert, precision and recall."""

    rulebook: str
    events: int
    outcomes: tuple[ExpectedOutcome, ...]
    unexpected: tuple[RaisedAlert, ...]
    raised: int

    @property
    def precision(self) -> float:
        met = sum(1 for o in self.outcomes if o.met_by is not None)
        return 1.0 if self.raised == 0 else met / self.raised

    @property
    def recall(self) -> float:
        met = sum(1 for o in self.outcomes if o.met_by is not None)
        return 1.0 if not self.outcomes else met / len(self.outcomes)


def replay(events: Iterable[EventBase], *, rulebook: Rulebook,
           settings: CheckerSettings | None = None) -> tuple[list[RaisedAlert], int]:
    """Every alert raised on the stream (latest version of each, cleared ones left out), and the event count."""
    checker = RulesChecker(rulebook=rulebook, settings=settings)
    latest: dict[str, Alert] = {}
    count = 0
    for event in events:
        count += 1
        for alert in checker.process(event):
            latest[alert.alert_id] = alert
    for alert in checker.flush():
        latest[alert.alert_id] = alert
    raised = [RaisedAlert(alert=a, raised_at=_raised_at(a)) for a in latest.values() if a.confidence > 0]
    return raised, count


def _raised_at(alert: Alert) -> float:
    if alert.raised_at is None:
        raise ValueError(f"expected an alert with raised_at, got {alert.alert_id} without one")
    return alert.raised_at


def score(raised: list[RaisedAlert], expected: Iterable[ExpectedAlert], *, rulebook: str,
          events: int) -> TruthReport:
    """Match raised alerts to expected ones (rule, seat, raised inside the window)."""
    free = list(raised)
    outcomes: list[ExpectedOutcome] = []
    for want in sorted(expected, key=lambda e: e.t_start):
        match = next((r for r in free if r.alert.rule is want.rule and r.alert.seat == want.seat
                      and want.t_start <= r.raised_at <= want.t_end), None)
        if match is not None:
            free.remove(match)
        outcomes.append(ExpectedOutcome(expected=want, met_by=match))
    return TruthReport(rulebook=rulebook, events=events, outcomes=tuple(outcomes), unexpected=tuple(free),
                       raised=len(raised))


def check_truth(records: Iterable[TruthRecord], *, rulebook: Rulebook,
                settings: CheckerSettings | None = None) -> TruthReport:
    """Replay the events of a truth file and score the alerts against its expected alerts."""
    events: list[EventBase] = []
    expected: list[ExpectedAlert] = []
    for record in records:
        if isinstance(record, ExpectedAlert):
            expected.append(record)
        else:
            events.append(record)
    raised, count = replay(events, rulebook=rulebook, settings=settings)
    return score(raised, expected, rulebook=rulebook.id, events=count)
