"""Chip-integrity checks (000 13-2, 13-3; 003 13-2..13-4).

- D1 hidden chips: a seat's stack seen covered (visible fraction below a threshold) for longer than a few
  seconds. A hand passing over a stack during a push is not reported by the edge and does not count.
- D2 chips from outside: chips coming onto the table over the rail at a seat; or, from the chip ledger, a stack
  that grows with no chips leaving the pot, a bet zone or the rail to explain it (lower confidence).
- D3 chips leaving the table: chips taken off the table over the rail at a seat; or, from the ledger, chips that
  left a stack and never landed anywhere the camera sees (lower confidence).

The ledger follows every chip zone: a decrease puts chips "in transit", an increase takes them back. A stack
may only be fed by chips from the pot, a bet zone, the hole-card zone (a card protector) or the rail, never by
another stack. Change given back, pot awards, gathers and card protectors balance; a covered stack is not read
until it is uncovered (hidden chips reappearing are not additions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from floorman.core.events import EventBase, RailCrossing, RailDirection, ZoneChips
from floorman.core.rule_ids import RuleId
from floorman.rules.check_base import Check, View
from floorman.rules.findings import Evidence, Finding


@dataclass
class _Cover:
    start: ZoneChips
    reported: bool = False


def verify_hidden_chips(cover: _Cover, *, event: EventBase, view: View) -> Finding | None:
    """D1: the stack has stayed covered for at least `covered_min_s`."""
    held = event.t - cover.start.t
    if cover.reported or held < view.settings.covered_min_s:
        return None
    start = cover.start
    hidden = round(100 * (1 - start.visible_fraction))
    evidence = Evidence.of(start, event)
    return evidence.finding(
        rule=RuleId.HIDDEN_CHIPS, seat=start.seat, key=f"cover{start.seq}", confidence=start.confidence,
        refs=view.book.parameters.stack_rules.cite,
        fr=f"Siège {start.seat} : {hidden} % du tapis caché depuis {held:.1f} s ; les jetons doivent rester "
           "visibles de tous.",
        en=f"Seat {start.seat}: {hidden}% of the stack covered for {held:.1f} s; chips must stay visible to all.")


class HiddenChipsCheck(Check):
    """D1."""

    rules = (RuleId.HIDDEN_CHIPS,)
    events = (ZoneChips,)
    ticks = True

    def __init__(self) -> None:
        self._covers: dict[int, _Cover] = {}

    @property
    def busy(self) -> bool:
        return bool(self._covers)

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        if not view.book.parameters.stack_rules.value.no_hidden_chips:
            return []
        found: list[Finding] = []
        if isinstance(event, ZoneChips) and event.seat is not None and event.zone.startswith("stack_"):
            cover = self._covers.get(event.seat)
            settings = view.settings
            below = settings.covered_below if view.chips_sure(event.confidence) else settings.covered_below_unsure
            if event.visible_fraction < below:
                if cover is None:
                    self._covers[event.seat] = _Cover(start=event)
                return found
            if cover is not None:
                del self._covers[event.seat]
                finding = verify_hidden_chips(cover, event=event, view=view)
                return [finding] if finding is not None else found
        for cover in self._covers.values():
            finding = verify_hidden_chips(cover, event=event, view=view)
            if finding is not None:
                cover.reported = True
                found.append(finding)
        return found


def verify_rail_crossing(event: RailCrossing, view: View) -> Finding | None:
    """D2 / D3: chips crossed the rail at a seat, onto the table or off it."""
    if event.objects != "chips" or (event.value <= 0 and not event.chips):
        return None
    if not view.chips_sure(event.confidence):
        return None  # the stack's count was unsure: its change proves nothing
    refs = view.book.parameters.outside_chips_sanction.cite
    seat = event.seat
    who_fr = f"Siège {seat}" if seat is not None else "Un joueur"
    who_en = f"Seat {seat}" if seat is not None else "A player"
    if event.direction is RailDirection.IN:
        return Evidence.of(event).finding(
            rule=RuleId.CHIPS_FROM_OUTSIDE, seat=seat, key=f"rail{event.seq}", refs=refs, confidence=event.confidence,
            fr=f"{who_fr} : {event.value} en jetons arrivés sur la table depuis le dessous du rail (poche) ; ils "
               "sont retirés du tournoi. Clip à vérifier par l'arbitre.",
            en=f"{who_en}: {event.value} in chips brought onto the table from below the rail (pocket); they are "
               "removed from the tournament. Clip for the director to review.")
    return Evidence.of(event).finding(
        rule=RuleId.CHIPS_LEAVING_TABLE, seat=seat, key=f"rail{event.seq}", refs=refs, confidence=event.confidence,
        fr=f"{who_fr} : {event.value} en jetons sortis de la table par le rail ; les jetons restent sur la table.",
        en=f"{who_en}: {event.value} in chips taken off the table over the rail; chips must stay on the table.")


@dataclass
class _Transit:
    """Chips that left a zone (or came over the rail) and have not landed yet."""

    t: float
    amount: int
    from_stack: bool
    source: ZoneChips | RailCrossing


@dataclass
class _Deficit:
    """A stack increase nothing explained yet."""

    amount: int
    event: ZoneChips


@dataclass
class _Arrival:
    """Chips that landed in a bet zone or the pot before anything left a stack for them (the stack read a frame or
    two after the bet: from a tilted 4K camera, pocket_chips_01, seat 4's bet of 100 read 30 ms before its stack
    shrank by 100, which was then taken for 100 that left the table: a false D3, session 65)."""

    t: float
    amount: int


class _Owed(Protocol):
    amount: int


_O = TypeVar("_O", bound=_Owed)


def _settle(owed: list[_O], transit: _Transit) -> None:
    """Take what `transit` carries against `owed` amounts, oldest first, dropping those met in full."""
    for entry in list(owed):
        used = min(entry.amount, transit.amount)
        entry.amount -= used
        transit.amount -= used
        if entry.amount == 0:
            owed.remove(entry)


class ChipLedgerCheck(Check):
    """D2 (rail crossings in, and unexplained stack increases) and D3 (rail crossings out, chips lost)."""

    rules = (RuleId.CHIPS_FROM_OUTSIDE, RuleId.CHIPS_LEAVING_TABLE)
    events = (ZoneChips, RailCrossing)
    ticks = True

    def __init__(self) -> None:
        self._values: dict[str, int] = {}
        self._sure: dict[str, bool] = {}  # whether each zone's last reading was sure
        self._transit: list[_Transit] = []
        self._deficits: list[_Deficit] = []
        self._arrivals: list[_Arrival] = []

    @property
    def busy(self) -> bool:
        return bool(self._transit or self._deficits)

    def observe(self, event: EventBase, view: View) -> list[Finding]:
        found: list[Finding] = []
        if self._arrivals:  # as long as a stack increase waits for chips to land (`_expired`)
            self._arrivals = [a for a in self._arrivals if event.t - a.t <= view.settings.ledger_window_s / 4]
        if isinstance(event, RailCrossing):
            finding = verify_rail_crossing(event, view)
            if finding is not None:
                found.append(finding)
            if event.direction is RailDirection.IN:
                self._put(_Transit(t=event.t, amount=event.value, from_stack=False, source=event))
            else:
                self._take(event.value, any_source=True)
        elif isinstance(event, ZoneChips):
            self._zone(event, trusted=view.chips_sure(event.confidence))
        if self._transit or self._deficits:
            found.extend(self._expired(event, view))
        return found

    def _zone(self, event: ZoneChips, *, trusted: bool) -> None:
        stack = event.zone.startswith("stack_")
        if stack and event.visible_fraction < 1.0:
            return  # covered: read it again once it is uncovered
        old = self._values.get(event.zone)
        was_sure = self._sure.get(event.zone, True)
        self._values[event.zone], self._sure[event.zone] = event.value, trusted
        if not (trusted and was_sure):
            return  # a change is as sure as the less sure of its two readings: the new value is the baseline
        if old is None:
            if stack or event.frame == 0:
                return
            old = 0
        delta = event.value - old
        if delta < 0:
            self._put(_Transit(t=event.t, amount=-delta, from_stack=stack, source=event))
        elif delta > 0:
            left = self._take(delta, any_source=not stack)
            if left and stack:
                self._deficits.append(_Deficit(amount=left, event=event))
            elif left:
                self._arrivals.append(_Arrival(t=event.t, amount=left))

    def _put(self, transit: _Transit) -> None:
        # chips from a stack first meet chips read landed a moment before; chips from elsewhere, a stack that grew a
        # moment before they landed
        if transit.from_stack:
            _settle(self._arrivals, transit)
        else:
            _settle(self._deficits, transit)
        if transit.amount > 0:
            self._transit.append(transit)

    def _take(self, amount: int, *, any_source: bool) -> int:
        for transit in self._transit:
            if amount == 0:
                break
            if transit.from_stack and not any_source:
                continue
            used = min(amount, transit.amount)
            transit.amount -= used
            amount -= used
        if any(t.amount <= 0 for t in self._transit):
            self._transit = [t for t in self._transit if t.amount > 0]
        return amount

    def _expired(self, event: EventBase, view: View) -> list[Finding]:
        window = view.settings.ledger_window_s
        found: list[Finding] = []
        for deficit in [d for d in self._deficits if event.t - d.event.t > window / 4]:
            self._deficits.remove(deficit)
            found.append(self._unexplained_increase(deficit))
        for transit in [t for t in self._transit if event.t - t.t > window]:
            self._transit.remove(transit)
            source = transit.source
            if transit.from_stack and isinstance(source, ZoneChips):
                found.append(self._lost(transit, source))
        return found

    @staticmethod
    def _unexplained_increase(deficit: _Deficit) -> Finding:
        event = deficit.event
        return Evidence.of(event).finding(
            rule=RuleId.CHIPS_FROM_OUTSIDE, seat=event.seat, key=f"ledger{event.seq}",
            confidence=round(0.6 * event.confidence, 3),
            fr=f"Siège {event.seat} : le tapis a augmenté de {deficit.amount} sans gain de pot, monnaie ni jetons "
               "venus d'ailleurs sur la table. Clip à vérifier par l'arbitre.",
            en=f"Seat {event.seat}: the stack grew by {deficit.amount} with no pot, change or chips from elsewhere "
               "on the table to explain it. Clip for the director to review.")

    @staticmethod
    def _lost(transit: _Transit, source: ZoneChips) -> Finding:
        return Evidence.of(source).finding(
            rule=RuleId.CHIPS_LEAVING_TABLE, seat=source.seat, key=f"ledger{source.seq}",
            confidence=round(0.5 * source.confidence, 3),
            fr=f"Siège {source.seat} : {transit.amount} en jetons ont quitté le tapis sans être revus sur la table.",
            en=f"Seat {source.seat}: {transit.amount} in chips left the stack and were not seen again on the table.")
