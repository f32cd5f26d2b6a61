"""Helpers for the check tests: a checker fed with handmade event streams."""

from __future__ import annotations

from collections.abc import Iterable

from floorman.core.alerts import Alert
from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.checker import TableChecker
from floorman.rules.rulebook import load_rulebook
from tests.rules.factories import Stream


def run(checker: TableChecker, *batches: Iterable[EventBase], flush: bool = True) -> list[Alert]:
    """Feed the batches; return the alerts raised (latest version of each), cleared ones included."""
    latest: dict[str, Alert] = {}
    for batch in batches:
        for event in batch:
            for alert in checker.process(event):
                latest[alert.alert_id] = alert
    if flush:
        for alert in checker.flush():
            latest[alert.alert_id] = alert
    return list(latest.values())


def raised(alerts: Iterable[Alert]) -> list[tuple[str, int | None]]:
    """(rule id, seat) of each alert still standing (confidence > 0)."""
    return [(a.rule.value, a.seat) for a in alerts if a.confidence > 0]


def table(book: str, *, seats: Iterable[int] = (1, 2, 3, 4), stack: int = 10_000, button: int = 1,
          blinds: tuple[int, int] = (100, 200)) -> tuple[TableChecker, Stream, list[EventBase]]:
    """A checker and a stream at the start of a hand: level, button, stacks, shuffle, blinds posted, cards dealt.

    With four seats and the button on 1, seat 2 posts the small blind, 3 the big blind and 4 acts first.
    """
    seats = list(seats)
    stream = Stream(stacks=dict.fromkeys(seats, stack))
    checker = TableChecker(table_id="t1", rulebook=load_rulebook(book))
    order = [s for s in seats if s > button] + [s for s in seats if s <= button]
    small, big = (order[-1], order[0]) if len(seats) == 2 else (order[0], order[1])
    events = [*stream.level(*blinds), *stream.button(button), *stream.seat_stacks(), *stream.shuffle(),
              *stream.push(small, blinds[0]), *stream.push(big, blinds[1]), *stream.deal(order)]
    return checker, stream, events


def rules_of(alerts: Iterable[Alert], rule: RuleId) -> list[Alert]:
    return [a for a in alerts if a.rule is rule and a.confidence > 0]
