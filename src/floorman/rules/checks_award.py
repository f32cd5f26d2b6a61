"""F4 odd chip (000 10-8, 003 9-9): a split pot's indivisible chips go to the right winner.

When the pot empties, the stack increases that follow within a few seconds are the awards. With several
winners and equal shares apart from the odd chips (units of the smallest chip in the pot), the odd chips go one
by one to the winners in order from the rulebook's anchor: the first player after the dealer (000 10-8; seat 1
sits at the dealer's left) or the first player left of the button (003 9-9). Shares that are not a split
(side pots, a misread) are left alone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from floorman.core.events import EventBase, ZoneChips
from floorman.core.rule_ids import RuleId
from floorman.rules.check_base import Check, View
from floorman.rules.findings import Evidence, Finding
from floorman.rules.params import OddChipAnchor
from floorman.rules.pots import Pot


@dataclass
class _Award:
    pot: ZoneChips
    amount: int
    unit: int
    received: dict[int, int] = field(default_factory=dict)
    events: list[ZoneChips] = field(default_factory=list)


def expected_split(*, amount: int, unit: int, order: list[int]) -> dict[int, int]:
    """Equal shares in `unit`s; the odd units one each to the winners in `order`."""
    units, n = amount // unit, len(order)
    base, extra = divmod(units, n)
    return {seat: (base + (1 if index < extra else 0)) * unit for index, seat in enumerate(order)}


def anchor_order(winners: list[int], *, anchor: OddChipAnchor, button: int | None) -> list[int] | None:
    """The winners in the order the odd chips are given; None when the rulebook says nothing."""
    ordered = sorted(winners)
    if anchor is OddChipAnchor.FIRST_AFTER_DEALER:
        return ordered
    if anchor is OddChipAnchor.LEFT_OF_BUTTON and button is not None:
        return [s for s in ordered if s > button] + [s for s in ordered if s <= button]
    return None


def _awarded_pots(award: _Award, pots: list[Pot]) -> list[Pot] | None:
    """The pots this award hands out, when there are side pots: all of them, or one; None otherwise."""
    contested = [p for p in pots if not p.uncalled]
    if len(contested) < 2:
        return None
    returned = [p for p in pots if p.uncalled and p.eligible[0] in award.received]
    for group in (contested + returned, contested, *([p] for p in contested)):
        if sum(p.amount for p in group) == award.amount:
            return group
    return None


def side_pot_split(award: _Award, pots: list[Pot], *, anchor: OddChipAnchor,
                   button: int | None) -> dict[int, int] | None:
    """The split of `pots` among winners chosen from the receivers that explains the award up to the odd chips;
    the award itself when it is right; None when nothing explains it."""
    receivers = set(award.received)
    choices = []
    for pot in pots:
        open_to = [s for s in pot.eligible if s in receivers]
        choices.append([c for n in range(1, len(open_to) + 1) for c in itertools.combinations(open_to, n)])
    near: dict[int, int] | None = None
    for winners in itertools.product(*choices):
        expected = dict.fromkeys(receivers, 0)
        for pot, chosen in zip(pots, winners, strict=True):
            order = anchor_order(list(chosen), anchor=anchor, button=button)
            if order is None or pot.amount % award.unit:
                return None
            for seat, share in expected_split(amount=pot.amount, unit=award.unit, order=order).items():
                expected[seat] += share
        if expected == award.received:
            return expected
        if near is None and all(abs(award.received[s] - expected[s]) <= award.unit * len(pots) for s in receivers):
            near = expected
    return near


def verify_odd_chip(award: _Award, view: View) -> Finding | None:
    """F4: the received shares are a split (per pot), but the odd chips went to the wrong winner(s)."""
    winners = sorted(award.received)
    param = view.book.parameters.odd_chip_anchor
    order = anchor_order(winners, anchor=param.value, button=view.state.button)
    if len(winners) < 2 or order is None or award.amount % award.unit or sum(award.received.values()) != award.amount:
        return None
    pots = _awarded_pots(award, view.state.pots)
    if pots is not None:
        found = side_pot_split(award, pots, anchor=param.value, button=view.state.button)
        if found is None or found == award.received:
            return None
        expected = found
    else:
        expected = expected_split(amount=award.amount, unit=award.unit, order=order)
        if sorted(expected.values()) != sorted(award.received.values()) or expected == award.received:
            return None
    should = [s for s in order if expected[s] > award.received[s]]
    got = [s for s in winners if award.received[s] > expected[s]]
    evidence = Evidence.of(award.pot, *award.events)
    return evidence.finding(
        rule=RuleId.ODD_CHIP, seat=None, key=f"award{award.pot.seq}", refs=param.cite,
        fr=f"Pot partagé : le jeton indivisible ({award.unit}) revient au(x) siège(s) {should}, donné au(x) "
           f"siège(s) {got}.",
        en=f"Split pot: the odd chip ({award.unit}) belongs to seat(s) {should}, given to seat(s) {got}.")


class OddChipCheck(Check):
    """F4."""

    rules = (RuleId.ODD_CHIP,)
    events = (ZoneChips,)
    ticks = True

    def __init__(self) -> None:
        self._values: dict[str, int] = {}
        self._units: dict[str, int] = {}
        self._award: _Award | None = None

    @property
    def busy(self) -> bool:
        return self._award is not None

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        found: list[Finding] = []
        award = self._award
        if award is not None and event.t - award.pot.t > view.settings.award_window_s:
            found += self._close(view)
        if not isinstance(event, ZoneChips) or event.visible_fraction < 1.0:
            return found
        old = self._values.get(event.zone)
        self._values[event.zone] = event.value
        if event.zone != "pot":
            if self._award is not None and old is not None and event.value > old and event.seat is not None \
                    and event.zone.startswith("stack_"):
                found += self._receive(event, old=old, view=view)
            return found
        unit = self._units.get("pot")
        if event.chips:
            self._units["pot"] = min(c.denom for c in event.chips)
        if old is None:
            return found
        if event.value < old and unit is not None:
            found += self._close(view)
            self._award = _Award(pot=event, amount=old - event.value, unit=unit)
        return found

    def _receive(self, event: ZoneChips, *, old: int, view: View) -> list[Finding]:
        award = self._award
        assert award is not None and event.seat is not None
        award.received[event.seat] = award.received.get(event.seat, 0) + event.value - old
        award.events.append(event)
        return self._close(view) if sum(award.received.values()) >= award.amount else []

    def _close(self, view: View) -> list[Finding]:
        award, self._award = self._award, None
        if award is None:
            return []
        finding = verify_odd_chip(award, view)
        return [finding] if finding is not None else []
