"""Hands and the dealer button: `hand_zone` enter/leave and `button_moved`.

A hand's seat is the one it reached the table from: the seat (or the dealer, seat None) whose rail position is
nearest to where its track was first seen, unless the state builder says. The zone under a hand must settle
before it counts, so a hand sweeping across a zone on its way makes no event. A player's stay in its own stack
or hole zone (`confirmed_visits`) is held back until something shows it was more than the hand passing by on
its way to the bet line or back: the chip and card derivers `confirm` it when the zone loses chips or cards
while the hand is there (or within `confirm_window_s` after it left), and a hand resting `rest_s` on a stack
confirms itself. Its enter is then published (late, at the time of the confirmation, before the zone's
new content), and its leave with it or when the hand leaves; an unconfirmed visit publishes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from floorman.core.events import ButtonMoved, HandZone, Tap
from floorman.core.geometry import FloatArray, as_points, distance_to_boundary, points_in_polygon
from floorman.core.layout import TableLayout, ZoneKind
from floorman.core.table_state import PointMm, SeenButton, SeenCard, SeenHand, TableState
from floorman.edge.derive import DeriveConfig, Emitter, zone_seat
from floorman.edge.derive_track import Settle, Track, Tracker

PickedUp = Callable[[int, float], bool]
Holding = Literal["nothing", "chips", "cards"]


def nearest_seat(layout: TableLayout, point: PointMm, *, dealer: bool) -> int | None:
    """The seat whose rail position is nearest to `point`; None when `dealer` and the dealer's is nearer."""
    best, best_d = None, math.inf
    for seat in layout.seats:
        d = math.dist(seat.position, point)
        if d < best_d:
            best, best_d = seat.number, d
    if dealer and math.dist(layout.dealer_position, point) < best_d:
        return None
    return best


@dataclass
class HandInfo:
    """What the deriver knows of one hand over its life."""

    seat: int | None
    zone: Settle[str | None]
    first_t: float
    entered_at: float = 0.0
    holding: str = "nothing"
    visits: dict[str, float] = field(default_factory=dict)  # zone -> seconds spent there (settled visits)
    rail_position: PointMm | None = None  # where it last came back into the rail-edge band from the table
    back_at_rail_since: float | None = None  # since when it has been back in the rail-edge band from the table
    on_table: bool = False
    at_stub_since: float | None = None  # since when it has been within stub_reach_mm of the deck zone
    on_cards_s: float = 0.0  # seconds it has rested on its seat's cards, frame to frame (`HandDeriver._time_on_cards`)
    on_cards_since: float | None = None  # the last frame it was there (None: it was not, that frame)
    over_rail: bool = True  # its seat is known: it was first seen at (or beyond) the rail, or the state builder said;
    # a track first seen out on the table (a hand lost and found again) has only a guess: the nearest seat's


@dataclass(frozen=True)
class _Leave:
    """A hand_zone leave to publish: the zone, the hand, when it entered the zone, and what it took from it
    (None: ask the chip deriver when published)."""

    zone: str
    hand: HandInfo
    entered: float
    holding: Holding | None = None


@dataclass
class _Visit:
    """A hand's stay in a zone whose hand_zone events wait for a confirmation."""

    zone: str
    hand: HandInfo
    entered: float
    left: float | None = None


class HandDeriver:
    """Follows hands; queues their zone enters and leaves for the deriver to emit in order."""

    def __init__(self, layout: TableLayout, *, config: DeriveConfig, out: Emitter) -> None:
        self.layout = layout
        self.config = config
        self.out = out
        self.tracker = Tracker(match_mm=2 * config.match_mm, still_mm=config.still_mm, lost_s=config.lost_s,
                               predict_s=config.hand_predict_s, switch_mm=config.hand_switch_mm, left_behind=True)
        self._kinds = frozenset(config.hand_zone_kinds)
        self._events = frozenset(config.hand_events)
        self._confirmed = frozenset(config.confirmed_visits)
        self._resting = frozenset(config.resting_visits)
        self._hands: dict[int, HandInfo] = {}
        self._tapped: dict[int, float] = {}  # per seat: when its last tap was published
        self._deck = layout.zone("deck").points
        names = {zone.name: zone.points for zone in layout.all_zones}
        self._seat_zones = {seat.number: (names[f"hole_{seat.number}"], names.get(f"bet_{seat.number}"))
                            for seat in layout.seats if f"hole_{seat.number}" in names}
        self._enters: list[tuple[str, int | None]] = []
        self._leaves: list[_Leave] = []
        self._pending: list[_Visit] = []
        self.current: list[Track] = []
        self.live: dict[int, HandInfo] = self._hands
        self.ended: list[tuple[Track, HandInfo]] = []
        """Hands gone in this frame, with what is known of them."""

    def _interesting(self, zone: str | None) -> str | None:
        if zone is None:
            return None
        kind = zone.rpartition("_")[0] if zone_seat(zone) is not None else zone
        return zone if kind in self._kinds else None

    def update(self, state: TableState) -> None:
        current, ended = self.tracker.update(state.hands, frame=state.frame, t=state.t)
        self.current = current
        self._enters, self._leaves, self.ended = [], [], []
        for track in ended:  # a hand the vision named anew is the same hand: what is known of it goes on
            if track.successor is not None and track.id in self._hands:
                self._hands[track.successor] = self._hands.pop(track.id)
        for track in current:
            self._follow(track, t=state.t)
        for track in ended:
            hand = self._hands.pop(track.id, None)
            if hand is None:
                continue
            self.ended.append((track, hand))
            if hand.zone.committed is not None:  # it left when last seen: the time it went unseen is no visit
                self._leave(hand, t=track.last_t)  # (from video a stray box on a hole card for 0.1 s was a tap)
        self._settle_visits(state.t)

    def _follow(self, track: Track, *, t: float) -> None:
        hand = self._hands.get(track.id)
        seen = track.seen
        if hand is None:
            seat = seen.seat if isinstance(seen, SeenHand) and seen.seat is not None else nearest_seat(
                self.layout, track.first_position, dealer=True)
            told = isinstance(seen, SeenHand) and seen.seat is not None
            hand = self._hands[track.id] = HandInfo(seat=seat, first_t=t, zone=Settle(self.config.settle_frames,
                                                                                      self.config.settle_s),
                                                    over_rail=told or track.first_zone in (None, "rail_edge"))
        if isinstance(seen, SeenHand) and seen.holding != "nothing":
            hand.holding = seen.holding
        self._time_on_cards(hand, track, t=t)
        if distance_to_zone(track.position, self._deck) > self.config.stub_reach_mm:
            hand.at_stub_since = None
        elif hand.at_stub_since is None:
            hand.at_stub_since = t
        if track.zone not in (None, "rail_edge"):
            hand.on_table = True
            hand.back_at_rail_since = None
        elif track.zone == "rail_edge" and hand.on_table:
            if hand.rail_position is None:
                hand.rail_position = track.position
            if hand.back_at_rail_since is None:
                hand.back_at_rail_since = t
        before = hand.zone.committed
        if hand.zone.observe(self._interesting(track.zone), t):
            if before is not None:
                self._leave(hand, t=t, zone=before)
            if hand.zone.committed is not None:
                hand.entered_at = t
                if self._kind_key(hand.zone.committed, hand.seat) in self._confirmed \
                        and zone_seat(hand.zone.committed) == hand.seat:
                    self._pending.append(_Visit(zone=hand.zone.committed, hand=hand, entered=t))
                else:
                    self._enters.append((hand.zone.committed, hand.seat))

    def _time_on_cards(self, hand: HandInfo, track: Track, *, t: float) -> None:
        """Adds the time since the last frame to `on_cards_s` when the hand was on its cards then and is now: in its
        own hole zone, or within `tap_reach_mm` of it and not of its own bet zone (a tap's rest, whichever side of
        the zone's edge the vision puts it frame by frame; a pushing hand lost between the cards and the bet zone
        is on its way)."""
        seat, reach = hand.seat, self.config.tap_reach_mm
        zones = self._seat_zones.get(seat) if seat is not None else None
        if zones is None:
            return
        hole, bet = zones
        on_cards = track.zone == f"hole_{seat}" or (distance_to_zone(track.position, hole) <= reach
                                                    and (bet is None or distance_to_zone(track.position, bet) > reach))
        if not on_cards:
            hand.on_cards_since = None
            return
        if hand.on_cards_since is not None:
            hand.on_cards_s += t - hand.on_cards_since
        hand.on_cards_since = t

    def _leave(self, hand: HandInfo, *, t: float, zone: str | None = None) -> None:
        left = zone if zone is not None else hand.zone.committed
        if left is None:
            return
        hand.visits[left] = hand.visits.get(left, 0.0) + t - hand.entered_at
        for visit in self._pending:
            if visit.hand is hand and visit.zone == left and visit.left is None:
                visit.left = t  # not confirmed yet: its leave waits with its enter
                return
        self._leaves.append(_Leave(zone=left, hand=hand, entered=hand.entered_at))

    @staticmethod
    def _kind_key(zone: str, seat: int | None) -> str:
        kind = zone.rpartition("_")[0] if zone_seat(zone) is not None else zone
        return f"{'dealer' if seat is None else 'player'}:{kind}"

    def _settle_visits(self, t: float) -> None:
        """Confirm the visits resting long enough; forget those left too long ago to be confirmed."""
        for visit in list(self._pending):
            resting = visit.left is None and self._kind_key(visit.zone, visit.hand.seat) in self._resting
            if resting and t - visit.entered >= self.config.rest_s:
                self._pending.remove(visit)
                self._enters.append((visit.zone, visit.hand.seat))
            elif visit.left is not None and t - visit.left > self.config.confirm_window_s:
                self._pending.remove(visit)

    def confirm(self, zone: str, *, holding: Holding) -> bool:
        """`zone` lost chips or cards (`holding`: which): the latest unconfirmed visit of a hand to it was a pick-up
        or a fold. Publishes its enter now (before the zone's new content) and queues its leave if the hand has
        left, holding what it took. False when no hand visited the zone (the loss was a misreading)."""
        for visit in reversed(self._pending):
            if visit.zone != zone:
                continue
            self._pending.remove(visit)
            if self._published(zone, visit.hand.seat, "enter"):
                self.out.emit(HandZone, zone=zone, seat=visit.hand.seat, action="enter")
            if visit.left is not None:
                self._leaves.append(_Leave(zone=zone, hand=visit.hand, entered=visit.entered, holding=holding))
            return True
        return False

    def emit_taps(self, *, landing: Callable[[int], bool], has_cards: Callable[[int], bool]) -> None:
        """A player's hand that rested on its own hole cards (`tap_min_s`, `tap_reach_mm`) and left with nothing of its
        seat changed (its zones hold what they held when the hand came: a hand resting on its cards hides them for a
        moment). One tap per visit: a hand seen as two tracks at once taps once. Not while chips of the seat's push are
        `landing` (the push is published once they have all landed: the hand seen as another track pushed them), and not
        where the seat `has_cards` none (a hand resting where its cards will be dealt, before the deal, checks nothing:
        from video such a tap made a rabbit hunt of burnless_board_02's flop). A hand back over its rail for `lost_s`
        has left too, though a box is still seen there (from video the gated detector's last box of a hand leaving by
        the frame's edge stayed a second: the taps came 1.7-1.9 s late, fresh1080 set)."""
        back = [hand for hand in self._hands.values() if hand.back_at_rail_since is not None
                and self.out.t - hand.back_at_rail_since >= self.config.lost_s]
        for hand in [hand for _, hand in self.ended] + back:
            seat = hand.seat
            if seat is None or hand.on_cards_s < self.config.tap_min_s or not has_cards(seat):
                continue
            if f"bet_{seat}" in hand.visits or landing(seat):  # the hand went on to push (or pull) chips
                continue
            if self._tapped.get(seat, -1.0) >= hand.first_t:
                continue
            if self.out.unchanged_since(seat, hand.first_t) and not self.out.laid_on_cards(seat, hand.first_t):
                self.out.emit(Tap, seat=seat, count=2, confidence=round(self.out.doubt_since(seat, hand.first_t), 3))
                self._tapped[seat] = self.out.t

    def _published(self, zone: str, seat: int | None, action: str) -> bool:
        return "*" in self._events or f"{self._kind_key(zone, seat)}:{action}" in self._events

    def emit_enters(self) -> None:
        for zone, seat in self._enters:
            if self._published(zone, seat, "enter"):
                self.out.emit(HandZone, zone=zone, seat=seat, action="enter")

    def emit_leaves(self, *, picked_up: PickedUp) -> None:
        for leave in self._leaves:
            zone, hand = leave.zone, leave.hand
            if not self._published(zone, hand.seat, "leave"):
                continue
            holding = leave.holding or hand.holding
            owner = zone_seat(zone)
            if zone.startswith("stack_") and owner is not None and picked_up(owner, leave.entered):
                holding = "chips"
            self.out.emit(HandZone, zone=zone, seat=hand.seat, action="leave", holding=holding)

    def dealer_dwell_at_stub(self, t: float) -> float:
        """How long a dealer's hand (seat None) has rested on the deck stub: within `stub_reach_mm` of the deck
        zone, without leaving (0 when none does). Not the deck zone itself: the hand holding the deck covers it
        from behind, and where its middle is seen depends on the box the detector draws."""
        return max((t - hand.at_stub_since for hand in self._hands.values()
                    if hand.seat is None and hand.at_stub_since is not None), default=0.0)

    def near(self, point: PointMm, mm: float) -> bool:
        """Whether a hand (or its arm: from where it came over the rail to the fingertips) seen in this frame
        is within `mm` of `point`."""
        return any(_segment_distance(point, track.first_position, track.position) <= mm for track in self.current)


def distance_to_zone(point: PointMm, polygon: FloatArray) -> float:
    """Millimetres from `point` to a zone's polygon (0 inside it)."""
    where = as_points([point])
    if points_in_polygon(where, polygon)[0]:
        return 0.0
    return float(distance_to_boundary(where, polygon)[0])


def _segment_distance(point: PointMm, start: PointMm, end: PointMm) -> float:
    dx, dy = end[0] - start[0], end[1] - start[1]
    length2 = dx * dx + dy * dy
    u = 0.0 if length2 == 0 else max(0.0, min(1.0, ((point[0] - start[0]) * dx + (point[1] - start[1]) * dy)
                                              / length2))
    return math.dist(point, (start[0] + u * dx, start[1] + u * dy))


@dataclass(frozen=True)
class ButtonSighting:
    """Where the dealer button was last seen, when, and the surest reading of it at that place."""

    position: PointMm
    t: float
    confidence: float


class ButtonDeriver:
    """The seat in front of which the dealer button lies, and where it was last seen (`sighting`): a card box
    there is the button read as a card (`read_as_card`)."""

    def __init__(self, layout: TableLayout, *, config: DeriveConfig, out: Emitter) -> None:
        self.layout = layout
        self.config = config
        self.out = out
        self.seat: Settle[int | None] = Settle(config.settle_frames, config.settle_s)
        self.sighting: ButtonSighting | None = None

    def update(self, state: TableState) -> None:
        button = state.button
        if button is None or (button.seat is None and button.position_mm is None):
            return  # unseen (covered, or moving under a hand): keep the last seat
        self._sight(button, state.t)
        seat = button.seat if button.seat is not None else nearest_seat(
            self.layout, button.position_mm or (0.0, 0.0), dealer=False)
        if self.seat.observe(seat, state.t) and self.seat.committed is not None:
            self.out.emit(ButtonMoved, seat=self.seat.committed)

    def _sight(self, button: SeenButton, t: float) -> None:
        """Remember where the button is seen; its surest reading there carries over from the sightings before it
        at the same place (within `button_card_mm`), and one seen elsewhere starts over (a button box read on a
        card for a few frames is no surer than it was)."""
        if button.position_mm is None:
            return
        last = self.sighting
        same = last is not None and math.dist(last.position, button.position_mm) <= self.config.button_card_mm
        confidence = max(last.confidence, button.confidence) if last is not None and same else button.confidence
        self.sighting = ButtonSighting(position=button.position_mm, t=t, confidence=confidence)

    def read_as_card(self, card: SeenCard, t: float) -> bool:
        """Whether a card box is the button itself: its centre lies within `button_card_mm` of where the button was
        seen at most `button_memory_s` ago, and the detector was less sure of the card than of the button there.
        A real card lying there would hide the button; the detector calls the button a card at times, beside its
        button box or instead of it (for up to 2.4 s from video)."""
        last, reach = self.sighting, self.config.button_card_mm
        if last is None or reach <= 0 or card.position_mm is None or t - last.t > self.config.button_memory_s:
            return False
        return card.confidence < last.confidence and math.dist(card.position_mm, last.position) <= reach


ContentT = TypeVar("ContentT")


class ZoneDeriver(Generic[ContentT]):
    """What the card and chip derivers share: the zones of some kinds, each with its settling content, a
    tracker of their objects, and the hands (which hide objects and carry them)."""

    def __init__(self, layout: TableLayout, *, config: DeriveConfig, out: Emitter, hands: HandDeriver,
                 kinds: Iterable[ZoneKind], predict_s: float = 0.0, kept_mm: float | None = None) -> None:
        self.layout = layout
        self.config = config
        self.out = out
        self.hands = hands
        self.tracker = Tracker(match_mm=config.match_mm, still_mm=config.still_mm, lost_s=config.lost_s,
                               predict_s=predict_s, kept_mm=kept_mm)
        wanted = set(kinds)
        self.zones = [z.name for z in layout.all_zones if z.kind in wanted]
        self._settle: dict[str, Settle[ContentT]] = {
            name: Settle(config.settle_frames, config.settle_s) for name in self.zones}
