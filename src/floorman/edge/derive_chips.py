"""Chips: `zone_chips` per chip zone, `chips_pushed` with forward trips, and `rail_crossing` of chips.

A zone's content is the chips at rest in it (stacks a hand carries make none), plus the stacks a hand hides
there for now; it must settle before it counts. A hidden stack is only as good as the moment it went out of
sight: when the seen part of a zone changes while a hand hides some of it, the hidden stacks may have been
taken, merged or restacked, so the zone keeps its content until it is seen whole again (and so do the bet and
hole zones of that seat, and the pot, so that chips never land before the stack they left is read). Chips move
only in a hand: a zone whose stacks lie where they lay, and that no hand came within `reach_mm` of since its
last change, keeps its content whatever a new reading says (from video a stack is read again whenever its box
moves by a pixel, and a count read unsure can jump by half). A change is as sure as the readings of the stacks
that changed, before and after: a stack read the same where it lay moved nothing, however unsure its reading, and
neither did one read the same a chip's width aside from there, pushed by chips laid where it lay (the events'
confidence). Between zones the chips are followed by value:
- a stack that shrinks is a pick-up by its seat (remembered for `pickup_window_s`);
- a bet zone that grows is a push by its seat (the chips crossed the seat's bet line): `chips_pushed` with
  the next trip number of that seat, `t_start` the start of the pick-up; but chips read there less sure than
  `tap_sure` and worth more than the seat's stack was ever read holding are the bet zone misread, no push;
- a bet zone that shrinks is a gather: the pot's next growth is explained by it, and trips restart when the
  shrink is read at least `tap_sure` (from a tilted 4K camera a bet of three chips read as two at 0.04 and then as
  six had made the string bet's second trip a push of its own, the first a raise below the minimum); a bet read
  surely, then short less sure than that, is not committed at all (`_unsure_shrinks`): it waits for a sure reading
  or an empty zone;
- a pot that grows with no gather to explain it, right after a pick-up, is a splash by the seat that picked up;
  it is as sure as that pick-up too, unless the seat's own hand (come over its rail) laid the chips there.
  Where chips gathered within `gather_misread_s` explain part of the growth and the pot is read less sure than
  `tap_sure`, the rest is taken for a misread of the gather, not a splash (from a tilted 4K camera the dealer's
  gather of 200 read as 300 at 0.29 was a splash of 300 by a seat whose stack an unsure reading had shrunk: a push
  read unsure leaves every betting ruling of the hand unsaid, and string_bet_02's string bet went unflagged).
  A pot that grows with no gather and no pick-up to explain it is a splash by the one seat whose own hand (come over
  its rail) laid the chips there, as sure as the pot's reading (the stack's shrink may go unread under the hand).
  A pot never shrinks in play: where a new stack lies in it and every other stack that changed is read again where
  it lay (pushed aside at most two chips' widths), as the same values, its count unsure, the new stack is what came,
  whatever the others' new counts add up to (`_laid_beside`).
  A push also says how sure it is that chips came to rest where it landed, whatever their value
  (`landed_confidence`: the counts of the stacks holding chips of the values that came; what a splash rests on):
  from a tilted 4K camera the pot's chips under a top are seen from above, their values never sure (splash_02's
  three 100s: count 0.90, values 0.50), so a splash had never been sure enough to flag. A stack whose top shows a
  value that came, where no stack showed it before, is chips come to rest however many: as sure as its values too
  (from 1280x720 a 500 thrown into the pot is read one chip at 0.07, its value at 0.98).
A stack zone is covered when less than `covered_below` of its chips (counted, not valued) is seen for
`cover_min_s`: its zone_chips then carries the visible fraction, and 1.0 again when the cover ends. A stack kept
only because a hand hides it lies where it lay: no box without a track id farther than `same_stack_mm` takes its
track (`Tracker.kept_mm`).

Chips in a hand are seldom seen, so the rail is watched through hands: a stack that grows under its own
player's hand with no pot, bet or put-back to explain it got chips from below the table (`hand_zone(rail_edge,
enter, holding=chips)` and `rail_crossing(in)`); a player's hand that picked chips up and left the table over
the rail with them not landed anywhere took them off it (`rail_crossing(out)`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from floorman.core.chips import ChipCount
from floorman.core.events import ChipsPushed, HandZone, RailCrossing, ZoneChips
from floorman.core.layout import TableLayout, ZoneKind
from floorman.core.table_state import PointMm, SeenChips, TableState
from floorman.edge.derive import DeriveConfig, Emitter, zone_seat
from floorman.edge.derive_hands import HandDeriver, ZoneDeriver, distance_to_zone
from floorman.edge.derive_track import Settle, Track
from floorman.vision.detector import box_iou

ChipContent = tuple[tuple[int, int], ...]  # (denomination, count), highest first
_KINDS = (ZoneKind.STACK, ZoneKind.HOLE, ZoneKind.BET, ZoneKind.POT)
RAIL = "rail_edge"


@dataclass
class _Pickup:
    seat: int
    t: float
    value: int
    chips: ChipContent
    sure: float = 1.0  # how sure the change of the stacks it came from is (`_change_sureness`)


@dataclass
class _Landing:
    seat: int
    landed: str
    chips: ChipContent
    t_start: float
    last: float
    sure: float = 1.0  # how sure its amount is (`ChipsPushed.confidence`)
    landed_sure: float = 1.0  # how sure it is that chips came to rest there (`ChipsPushed.landed_confidence`)


@dataclass(frozen=True, slots=True)
class _StackRead:
    """One stack of a zone's reading: where it lies, its chips, how sure they are (count and values; count;
    values)."""

    position: PointMm
    chips: tuple[int, ...]
    sure: float
    count_sure: float
    values_sure: float


@dataclass(frozen=True)
class _Change:
    zone: str
    old: ChipContent
    new: ChipContent
    visible: float
    since: float
    first: bool


def _chips(content: ChipContent) -> tuple[ChipCount, ...]:
    return tuple(ChipCount(denom=d, count=n) for d, n in content)


def _value(content: ChipContent) -> int:
    return sum(d * n for d, n in content)


def _sum(a: ChipContent, b: ChipContent) -> ChipContent:
    total = Counter(dict(a))
    total.update(dict(b))
    return tuple(sorted(total.items(), reverse=True))


def _difference(new: ChipContent, old: ChipContent) -> ChipContent:
    """The chips of `new` that `old` lacks (positive part of the difference), highest first."""
    delta = Counter(dict(new))
    delta.subtract(Counter(dict(old)))
    return tuple(sorted(((d, n) for d, n in delta.items() if n > 0), reverse=True))


class ChipDeriver(ZoneDeriver[ChipContent]):
    """Chip zones, pushes and rail crossings."""

    def __init__(self, layout: TableLayout, *, config: DeriveConfig, out: Emitter, hands: HandDeriver) -> None:
        super().__init__(layout, config=config, out=out, hands=hands, kinds=_KINDS, kept_mm=config.same_stack_mm)
        self._sureness: dict[str, float] = {}  # per zone: how sure its latest reading is (values and counts)
        self._committed_sure: dict[str, float] = {}  # per zone: how sure the reading it last committed was
        self._cover: dict[str, Settle[bool]] = {
            name: Settle(config.settle_frames, config.cover_min_s) for name in self.zones if name.startswith("stack_")}
        self._pickups: dict[int, _Pickup] = {}
        self._gathered: list[tuple[float, int]] = []
        self._returns: list[tuple[float, int]] = []
        self._trips: dict[int, int] = {}
        self._stack_high: dict[int, int] = {}  # per seat: the most its stack zone was published holding
        self._last_pusher: int | None = None
        self._landing: _Landing | None = None
        self._read: dict[int, Counter[int]] = {}  # the chips each stack track was last read as
        self._read_at: dict[int, float] = {}  # and when
        self._polygons = {name: layout.zone(name).points for name in self.zones}
        self._reached: dict[str, float] = {}  # per zone: when a hand was last within reach of it
        self._reached_by: dict[tuple[str, int], float] = {}  # per (zone, seat): when that seat's hand last was
        self._changed: dict[str, float] = {}  # per zone: when its published content last changed
        self._reads: dict[str, list[_StackRead]] = {}  # per zone: its latest reading, stack by stack
        self._committed_reads: dict[str, list[_StackRead]] = {}  # per zone: that of its published content
        self._suspect: set[int] = set()  # stack tracks whose chips changed wholesale under a hand
        self._touched: dict[int, float] = {}  # per stack track: when a hand was last within cover_mm of it
        self._open_count: dict[int, int] = {}  # per stack track: its count last read at rest with no hand near it
        self._lain_since: dict[int, float] = {}  # per lost stack track: since when a stack has lain where it lies
        self._laid_at: dict[int, float] = {}  # per stack track: when a hand put other chips where it stood
        self._seen_with: dict[int, set[int]] = {}  # per stack track: the tracks seen in one frame with it
        self._now = 0.0  # the frame being derived

    # -- queries used by the other derivers ------------------------------------------------------------------

    def picked_up_by(self, seat: int, since: float) -> bool:
        pickup = self._pickups.get(seat)
        return pickup is not None and pickup.value > 0 and pickup.t >= since - self.config.settle_s - 0.5

    def landing(self, seat: int) -> bool:
        """Whether chips of the seat's push are landing (not published yet: a trip may still add to them)."""
        return self._landing is not None and self._landing.seat == seat

    def reset_trips(self) -> None:
        self.flush()
        self._trips.clear()
        self._last_pusher = None

    # -- per frame -------------------------------------------------------------------------------------------

    def _hidden(self, track: Track) -> bool:
        return self._under_hand(track) or self._lost_untouched(track)

    def _under_hand(self, track: Track) -> bool:
        return (track.zone in self._settle and track.rest_zone == track.zone
                and self.hands.near(track.position, self.config.cover_mm))

    def _lost_untouched(self, track: Track) -> bool:
        """Whether an unseen stack still lies where it lay at rest: chips leave only in a hand, and the detector loses
        weak boxes (under_raise_01 from a tilted 4K camera: a stack of six 500s lost at the detector's full refresh,
        found again 3 s later under its player's check, had read as 3000 taken, then brought from below the rail).
        It is kept when it lay there when the zone's content was last published (a box seen for a frame or two is
        not), no hand came within `cover_mm` of it since it was last seen, that was at most `lost_hold_s` ago and no
        longer ago than it had been seen (a phantom box seen for a second, kept until its seat's check, had made the
        check a pick-up), and no track lies where it lay that was first seen since it was lost (the stack found again
        under another id: one stack, not two) or was seen since and is lost too. When it lay there, and how long it
        has been seen, count from the first sighting of the stack at that place under any id (`_lain`).

        The vision names one stack anew as its boxes hop: from a tilted 4K camera (out_of_turn_04) seat 6's nineteen
        100s, seen under a new id, lost, their old id left on a box over them and the 25s beside read 100 x 9 + 25 x 5;
        the new id, first seen after the zone was published, was not kept, the old one was with that reading, then
        the new one too once the zone changed: 28 100s, a false 1900 brought from below the rail. A track seen there
        now with the lost one's chips is the stack too, whenever its id was first given (session 61, the same
        scenario: seat 6's six 500s seen again under the id of a chip its hand had held, kept beside it, counted
        twice, then a false 2600 taken off the table over the rail; `_found_again`)."""
        since = self._lain(track)
        if not (track.zone in self._settle and track.rest_zone == track.zone
                and since <= self._changed.get(track.zone, -math.inf)
                and self._now - track.last_t <= min(self.config.lost_hold_s, track.last_t - since)
                and self._touched.get(track.id, -math.inf) < track.last_t):
            return False
        return not any(self._found_again(track, other) for other in self.tracker.tracks.values())

    def _found_again(self, lost: Track, other: Track) -> bool:
        """Whether `other` is the `lost` stack seen since under another id: within `same_stack_mm` of where it lay,
        first seen after it was lost, or seen since and lost too, or seen now with its chips within half that (no
        other stack stands there: two stacks' centres lie a chip's width apart), or never seen in one frame with it,
        as one first seen after it was lost never was (two boxes of one stack named in turn, however read: from a
        tilted 4K camera, out_of_turn_04, seat 6's nineteen 100s boxed frame by frame in turn 29 mm apart under two
        ids, the other box read as 29 chips, the one lost a frame kept beside it: a false 1900 brought from below the
        rail, session 64), or seen now holding every chip it held and more (one box laid over it and a stack beside
        it, read as one mixed stack: from a tilted 4K camera, string_bet_02, seat 6's eighteen 100s and eight 25s
        boxed as one of 18 x 100 + 10 x 25, 30 mm off the 100s and seen with their own box at times; that box lost,
        it was kept beside the other: 1800 counted twice, a false D2 and D3 under ggc, session 65)."""
        distance = other.distance_to(lost.position)
        if other.last_t <= lost.last_t or distance > self.config.same_stack_mm:
            return False
        return (other.first_t > lost.last_t or other.last_t < self._now
                or other.id not in self._seen_with.get(lost.id, ())
                or _more_chips(other, lost)
                or (distance <= self.config.same_stack_mm / 2.0 and _same_chips(other, lost)))

    def _lain(self, track: Track) -> float:
        """Since when a stack has lain where this lost track lies: its first sighting, or that of a track lost before
        it within `same_stack_mm` (the same stack under the vision's earlier id), remembered past that track's end;
        never before a hand put other chips where it stood (`_relabelled`): what lay there before is gone.

        From a fused pair of 4K cameras (string_bet_02) the dealer's gather of seat 3's 100 left the corner of its hole
        card boxed in the bet zone as eleven 5000s, under the id of the 100 (seen since 4.5 s): lost at 20.0 s, it was
        kept the full `lost_hold_s`, the bet zone was not read empty before the flop's bet of 500 landed in it, and
        the bet made no push (seats 6 and 8 then acted "out of turn")."""
        laid = self._laid_at.get(track.id, -math.inf)
        since = self._lain_since.get(track.id, track.first_t)  # never later than its first sighting
        for other in self.tracker.tracks.values():
            if laid <= other.last_t < track.last_t and other.distance_to(track.position) <= self.config.same_stack_mm:
                since = min(since, self._lain_since.get(other.id, other.first_t))
        since = max(since, laid)
        self._lain_since[track.id] = since
        return since

    def update(self, state: TableState) -> None:
        self._now = state.t
        current, _ = self.tracker.update(state.chips, frame=state.frame, t=state.t, hidden=self._hidden)
        together = {track.id for track in current}
        for track_id in together:
            self._seen_with.setdefault(track_id, set()).update(together)
        for track in self.tracker.tracks.values():  # seen or not: a hand over it may move it
            if self.hands.near(track.position, self.config.cover_mm):
                self._touched[track.id] = state.t
                if track.zone in self._polygons:
                    self._reached[track.zone] = state.t
        self._rail_out()
        contents: dict[str, list[tuple[Track, float]]] = {name: [] for name in self.zones}
        doubtful: set[str] = set()
        merged = _over_others(current)
        for track in current:
            seen = track.seen
            if track.still and track.zone in contents and isinstance(seen, SeenChips) and track.id not in merged:
                # Only a hand covers a stack; cards or the camera's angle hiding part of it do not count.
                covered = self.hands.near(track.position, self.config.cover_mm)
                contents[track.zone].append((track, seen.visible_fraction if covered else 1.0))
                if not covered and seen.count:
                    self._open_count[track.id] = seen.count
                if self._relabelled(track, seen, covered=covered):
                    doubtful.add(track.zone)
        for track in self.tracker.unseen(current):
            if track.zone not in contents:
                continue
            if self._under_hand(track):
                contents[track.zone].append((track, 0.0))
                doubtful.add(track.zone)
            elif self._lost_untouched(track):  # no hand covers it: the camera lost it, its chips lie there still
                contents[track.zone].append((track, 1.0))
        readings = {name: _content(stacks) for name, stacks in contents.items()}
        for name, stacks in contents.items():
            self._sureness[name] = _sureness(stacks)
        self._reads = {name: _stack_reads(stacks) for name, stacks in contents.items()}
        self._note_reach(state.t)
        held = (self._in_doubt(readings, doubtful) | self._untouched(readings)
                | self._unsure_shrinks(readings))
        changes: list[_Change] = []
        for name in self.zones:
            settle = self._settle[name]
            first, before, since = not settle.known, settle.committed or (), settle.pending_since
            visible = _visible(contents[name], self._open_count, now=state.t)
            if name in held:
                settle.hold(state.t)
            elif settle.observe(readings[name], state.t):
                changes.append(_Change(name, before, settle.committed or (), visible, since or state.t, first))
                continue
            if name in self._cover and settle.known:
                self._update_cover(name, settle.committed or (), visible, state.t)
        # Pick-ups and gathers first, then what lands: a push is explained by the pick-up of the same frame.
        changes.sort(key=lambda c: _value(c.new) - _value(c.old))
        for change in changes:
            self._commit(change)
        if self._landing is not None and state.t - self._landing.last > self.config.trip_merge_s:
            self.flush()
        self._expire(state.t)
        for gone in self._read.keys() - self.tracker.tracks.keys():
            del self._read[gone], self._read_at[gone]
            self._suspect.discard(gone)
        for gone in self._touched.keys() - self.tracker.tracks.keys():
            del self._touched[gone]
        for gone in self._open_count.keys() - self.tracker.tracks.keys():
            del self._open_count[gone]
        for gone in self._lain_since.keys() - self.tracker.tracks.keys():
            del self._lain_since[gone]
        for gone in self._laid_at.keys() - self.tracker.tracks.keys():
            del self._laid_at[gone]
        for gone in self._seen_with.keys() - self.tracker.tracks.keys():
            del self._seen_with[gone]

    def _relabelled(self, track: Track, seen: SeenChips, *, covered: bool) -> bool:
        """Whether this stack is in doubt: under a hand, its chips changed to ones that neither add to nor take
        from what it was (another stack put where it stood, read as the same one); it stays in doubt while the hand
        is there. Chips so changed under a hand, or since a hand came over the stack, were laid there then (`_lain`)."""
        chips, before = Counter(seen.denominations), self._read.get(track.id)
        other = before is not None and not (chips <= before or before <= chips)
        if other and (covered or self._touched.get(track.id, -math.inf) > self._read_at.get(track.id, math.inf)):
            self._laid_at[track.id] = self._now
        self._read[track.id], self._read_at[track.id] = chips, self._now
        if not covered:
            self._suspect.discard(track.id)
        elif other:
            self._suspect.add(track.id)
        return track.id in self._suspect

    def _in_doubt(self, readings: dict[str, ChipContent], doubtful: set[str]) -> set[str]:
        """The zones whose new reading must wait this frame.

        A zone part of which a hand hides, and whose seen part changed, waits until it is seen again: the hidden
        stacks may have been taken, merged or restacked under the hand, and counting them as they were would
        add them twice. While a seat's stack waits, chips growing its bet or hole zone (or the pot, for any
        stack) wait too: the chips that land must not be read before the stack they left."""
        held = {name for name in doubtful
                if self._settle[name].known and readings[name] != self._settle[name].committed}
        stacks = {zone_seat(name) for name in held if name.startswith("stack_")}
        if not stacks:
            return held
        for name, reading in readings.items():
            settle = self._settle[name]
            if not settle.known or _value(reading) <= _value(settle.committed or ()):
                continue
            kind, seat = name.rpartition("_")[0], zone_seat(name)
            if name == "pot" or (kind in ("bet", "hole") and seat in stacks):
                held.add(name)
        return held

    def _untouched(self, readings: dict[str, ChipContent]) -> set[str]:
        """The zones whose new reading nothing can have caused: the same stacks lie there as when the zone's
        content last changed, and no hand came within `reach_mm` of the zone, or within `cover_mm` of one of its
        stacks, since. Their chips are the same chips read again; the committed content stays. A stack where
        none lay (chips tossed into the zone from afar) or gone from where one lay is a change, hand or not."""
        if self.config.reach_mm is None:
            return set()
        return {name for name, reading in readings.items()
                if self._settle[name].known and reading != self._settle[name].committed
                and _same_places(self._reads[name], self._committed_reads.get(name), mm=self.config.same_stack_mm)
                and self._reached.get(name, -1.0) < self._changed.get(name, 0.0)}

    def _unsure_shrinks(self, readings: dict[str, ChipContent]) -> set[str]:
        """The bet zones read with fewer chips than they surely hold, and not sure of it (`tap_sure`): a bet's
        chips stay until the dealer gathers them all, so a bet read short while chips land on it or a hand passes
        is the camera's doubt, not chips gone; it waits for a sure reading (or an empty zone). Committed, such a
        reading had made the next trip's amount the difference from it (a bet of three chips read as two at 0.26,
        then six: a trip of four at 0.26, too unsure for the string bet's check). A bet whose content was itself
        read unsure is not held: a lower reading may mend it (premature_board_03 from 1280x720: a one-chip blind
        read as two at 0.26, then one, then two with the call: the call's push)."""
        return {name for name, reading in readings.items()
                if name.startswith("bet_") and reading and self._settle[name].known
                and _value(reading) < _value(self._settle[name].committed or ())
                and self._sureness.get(name, 1.0) < self.config.tap_sure
                and self._committed_sure.get(name, 1.0) >= self.config.tap_sure}

    def _note_reach(self, t: float) -> None:
        """Remember when a hand last came within `reach_mm` (`cover_mm` when that is off) of each zone, and when a
        player's hand that came over its seat's rail did (a hand first seen out on the table has no sure seat)."""
        reach = self.config.reach_mm if self.config.reach_mm is not None else self.config.cover_mm
        for track in self.hands.current:
            hand = self.hands.live.get(track.id)
            for name, polygon in self._polygons.items():
                if distance_to_zone(track.position, polygon) > reach:
                    continue
                self._reached[name] = t
                if hand is not None and hand.seat is not None and hand.over_rail:
                    self._reached_by[name, hand.seat] = t

    def _update_cover(self, zone: str, content: ChipContent, visible: float, t: float) -> None:
        cover = self._cover[zone]
        covered = bool(content) and visible < self.config.covered_below
        was_known = cover.known
        if cover.observe(covered, t) and (was_known or cover.committed):
            self._emit_zone(zone, content, visible=visible if cover.committed else 1.0)

    def _emit_zone(self, zone: str, content: ChipContent, *, visible: float) -> None:
        self.out.emit(ZoneChips, zone=zone, seat=zone_seat(zone), chips=_chips(content), value=_value(content),
                      visible_fraction=round(max(0.0, min(1.0, visible)), 2),
                      confidence=round(self._sureness.get(zone, 1.0), 3))

    def _commit(self, change: _Change) -> None:
        zone, old, new, first = change.zone, change.old, change.new, change.first
        self._changed[zone] = self.out.t
        changed = self._changed_stacks(zone)
        # A stack's chips read again unsure with as many chips where it lay are the camera's doubt, not chips that
        # came or went: left out of the change (`_reread_unsure`)
        reread = self._reread_unsure(zone) if zone.startswith("stack_") and not first else []
        was, now = old, new
        if reread and changed is not None:
            changed = [r for r in changed if not any(r in pair for pair in reread)]
            was = _difference(old, _content_of(then for then, _ in reread))
            now = _difference(new, _content_of(again for _, again in reread))
        sure = self._change_sureness(zone, changed)
        # How sure the chips that came are: the stacks of their values (another stack of the zone read again
        # differently, unsure, under a neighbour that hides it, says nothing of them)
        grown, delta = _difference(now, was), _value(now) - _value(was)
        if zone.startswith("bet_") and not first and delta >= 0:
            self._gathered_unseen(zone)
        laid = self._laid_beside(zone) if zone == "pot" and not first else ()
        if laid and _value(laid) > delta:  # a pot never shrinks in play: chips laid, others read again unsure
            grown, delta = laid, _value(laid)
        came = {v for v, _ in grown}
        sure_grown = self._change_sureness(zone, changed, of=came)
        # How sure it is that chips came to rest there at all, whatever their values: the counts of the stacks
        # holding chips of the values that came (a splash is chips thrown into the pot, of any value)
        landed = self._landed_sureness(zone, changed, came)
        self._committed_reads[zone] = self._reads.get(zone, [])
        if first and not new:
            return
        seat = zone_seat(zone)
        kind = zone.rpartition("_")[0] if seat is not None else zone
        self._committed_sure[zone] = self._sureness.get(zone, 1.0)
        if seat is not None and kind == "stack" and not first and delta != 0:
            if delta < 0:
                self._picked(seat, -delta, chips=_difference(was, now), since=change.since, sure=sure)
            else:
                self._stack_grew(seat, grown, delta, sure=sure_grown)
        elif seat is not None and kind == "hole" and delta > 0:
            self._picked(seat, -delta, chips=(), since=change.since)  # a card protector from the stack
        elif seat is not None and kind == "bet" and delta > 0 and self._is_push(seat):
            if not self._beyond_stack(seat, _difference(now, was), sure=sure):
                self._land(seat, _difference(now, was), landed=zone, sure=sure, landed_sure=landed)
        elif kind in ("bet", "pot", "hole") and delta < 0:
            if kind == "bet":
                self._gathered.append((self.out.t, -delta))
                if sure >= self.config.tap_sure:
                    self.reset_trips()  # a gather; a bet read a chip short unsure is no gather of the trips
            self._returns.append((self.out.t, -delta))
        elif zone == "pot" and delta > 0:
            self._pot_grew(grown, delta, sure=sure, landed_sure=landed, since=change.since)
        if seat is not None and kind == "stack":
            self._stack_high[seat] = max(self._stack_high.get(seat, 0), _value(new))
        if seat is not None and kind in ("stack", "hole") and delta < 0:
            self.hands.confirm(zone, holding="chips")  # a pick-up: the hand's visit was more than passing by
        cover = self._cover.get(zone)
        covered = cover is not None and bool(cover.committed)
        self._emit_zone(zone, new, visible=change.visible if covered else 1.0)

    def _gathered_unseen(self, zone: str) -> None:
        """A bet zone that did not shrink but whose surely read stacks are gone, each read nowhere near where it lay
        as the same chips, and where only unsure readings came, was gathered: the chips that had lain there explain
        the pot's next growth (as a shrink's do), whatever unsure reading came in their place (the trips go on: an
        unsure reading resets none). From a tilted 4K camera (string_bet_02) the dealer's gather of seat 3's two
        100s left a corner of its hole card boxed as eleven 5000s at 0.14 in the bet zone: the pot's 200 went
        unexplained, a splash by seat 3 at 0.47, and every betting ruling of the hand after it was left unsaid."""
        then = self._committed_reads.get(zone) or []
        now = self._reads.get(zone, [])
        kept_then, kept_now = _unchanged(then, now, mm=self.config.same_stack_mm)
        gone = [r for i, r in enumerate(then) if i not in kept_then and r.sure >= self.config.tap_sure]
        came = [r for j, r in enumerate(now) if j not in kept_now]
        if gone and all(r.sure < self.config.tap_sure for r in came):
            value = sum(sum(r.chips) for r in gone)
            self._gathered.append((self.out.t, value))
            self._returns.append((self.out.t, value))

    def _changed_stacks(self, zone: str) -> list[_StackRead] | None:
        """A zone's stacks that changed, as committed and as read now (None with no stack known before). A stack
        read the same where it lay changes nothing, however unsure its reading (the chips moved are the others')."""
        then = self._committed_reads.get(zone)
        if then is None:
            return None
        now = self._reads.get(zone, [])
        kept_then, kept_now = _unchanged(then, now, mm=self.config.same_stack_mm)
        return [r for i, r in enumerate(then) if i not in kept_then] + [r for j, r in enumerate(now)
                                                                         if j not in kept_now]

    def _reread_unsure(self, zone: str) -> list[tuple[_StackRead, _StackRead]]:
        """The zone's stacks read again where they lay (within `same_stack_mm`) with as many chips but other values,
        those values unsure before or now (under `tap_sure`), each with its reading before: a stack whose chips
        did not change, misread. From a tilted 4K camera (pocket_chips_01) a box holding seat 4's 1000s and 25s
        together, its values 0.0 sure, read 5 25s and 15 1000s, then 4 and 16 as two 500s came from below the
        rail: the 1000 it had 'gained' made those chips' crossing 0.0 sure, and the pocket chips went unflagged."""
        then = self._committed_reads.get(zone)
        if not then:
            return []
        now = self._reads.get(zone, [])
        kept_then, kept_now = _unchanged(then, now, mm=self.config.same_stack_mm)
        sure = self.config.tap_sure
        pairs = _closest_pairs(then, now, mm=self.config.same_stack_mm, skip=(kept_then, kept_now),
                               alike=lambda old, new: len(new.chips) == len(old.chips)
                               and min(new.values_sure, old.values_sure) < sure)
        return [(then[i], now[j]) for i, j in pairs]

    def _laid_beside(self, zone: str) -> ChipContent:
        """The chips of the zone's new stacks when each stack of it that changed is read again where it lay (within
        two chips' widths: pushed aside by the chips laid), as chips of the same values, its count unsure (`tap_sure`)
        before or now: the new stacks are chips that came, the others' new counts the camera's doubt. Nothing when a
        stack is gone, or read as other chips, or counted again surely. From 1280x720 (splash_01) the pot's six 100s
        were read as eight while the dealer's hand passed, then as one when seat 1 splashed a 500 where they lay,
        pushing them aside: a pot that shrank by 200 made no splash, and the next players' actions were out of
        turn."""
        then = self._committed_reads.get(zone)
        if not then:
            return ()
        now, reach = self._reads.get(zone, []), 2 * self.config.same_stack_mm
        kept_then, kept_now = _unchanged(then, now, mm=self.config.same_stack_mm)
        came = [r for j, r in enumerate(now) if j not in kept_now]
        for i, old in enumerate(then):
            if i in kept_then:
                continue
            again = [r for r in came if set(r.chips) == set(old.chips) and math.dist(r.position, old.position) <= reach
                     and min(r.count_sure, old.count_sure) < self.config.tap_sure]
            if not again:
                return ()  # gone, or read as other chips, or counted again surely
            came.remove(min(again, key=lambda r: math.dist(r.position, old.position)))
        return tuple(sorted(Counter(c for r in came for c in r.chips).items(), reverse=True))

    def _landed_sureness(self, zone: str, changed: list[_StackRead] | None, came: set[int]) -> float:
        """How sure it is that chips came to rest in the zone, whatever their values: the counts of its changed stacks
        holding chips of the values that came (`_change_sureness`), but a stack whose top shows a value that came and
        that no stack within two chips' widths showed before is as sure as its values' reading too: a new top is
        chips come to rest, however many (splash_01 from 1280x720: a 500 thrown into the pot, its count read 0.07
        sure, its value 0.98: the splash was never sure enough to flag)."""
        counts = self._change_sureness(zone, changed, of=came, counts=True)
        then = self._committed_reads.get(zone)
        if changed is None or then is None:
            return counts
        reach = 2 * self.config.same_stack_mm
        new_tops = [r for r in self._reads.get(zone, []) if r in changed and r.chips and r.chips[-1] in came
                    and not any(o.chips and o.chips[-1] == r.chips[-1] and math.dist(o.position, r.position) <= reach
                                for o in then)]
        if not new_tops:
            return counts
        rest = [r.count_sure for r in changed if r not in new_tops and came.intersection(r.chips)]
        return min([max(r.count_sure, r.values_sure) for r in new_tops] + rest)

    def _change_sureness(self, zone: str, changed: list[_StackRead] | None, *, of: set[int] | None = None,
                         counts: bool = False) -> float:
        """How sure a zone's change is: its `changed` stacks' least sure reading (`of`: only those holding chips of
        these values; `counts`: their counts' sureness alone, not their values'); with no stack known before, the
        zone's whole readings, before and now (counts and values)."""
        whole = min(self._committed_sure.get(zone, 1.0), self._sureness.get(zone, 1.0))
        if changed is None:
            return whole
        if of is not None:
            changed = [r for r in changed if of.intersection(r.chips)]
        return min((r.count_sure if counts else r.sure for r in changed), default=whole)

    def _picked(self, seat: int, value: int, *, chips: ChipContent, since: float, sure: float = 1.0) -> None:
        """Chips left a seat's stack (value < 0: chips of the stack landed somewhere first)."""
        pickup = self._pickups.get(seat)
        if pickup is None:
            self._pickups[seat] = _Pickup(seat=seat, t=since, value=value, chips=chips, sure=sure)
            return
        pickup.value += value
        pickup.sure = min(pickup.sure, sure)
        if value > 0:
            pickup.chips = _sum(pickup.chips, chips) if pickup.value > value else chips
            pickup.t = since if pickup.value == value else min(pickup.t, since)

    def _beyond_stack(self, seat: int, chips: ChipContent, *, sure: float) -> bool:
        """Whether chips read unsure (under `tap_sure`) in a seat's bet zone are worth more than its stack was ever
        read holding: no push, the bet zone misread. From a tilted 4K camera (string_bet_02) the corner of seat 3's
        hole card, boxed in its bet zone as eleven 5000s at 0.13 once the dealer had gathered the bets, made a push of
        55,000 from a stack of 13,000; its doubt left the hand's string bet unflagged."""
        high = self._stack_high.get(seat)
        return high is not None and sure < self.config.tap_sure and _value(chips) > high

    def _is_push(self, seat: int) -> bool:
        """Chips landing in a bet zone are a push when its seat picked chips up or its hand is over the table
        (not when the dealer makes change there)."""
        pickup = self._pickups.get(seat)
        return (pickup is not None and pickup.value > 0) or any(h.seat == seat for h in self.hands.live.values())

    def _land(self, seat: int, chips: ChipContent, *, landed: str, sure: float, landed_sure: float,
              laid: bool = False) -> None:
        """Chips of a push came to rest; landings close together in time make one trip. Chips in the seat's bet zone
        are the seat's, and so are chips its own hand `laid` where they landed; others (a splash the seat's hand was
        not seen laying) are the seat's only through its pick-up, and no surer than it (`sure`: their amount,
        `landed_sure`: that they came to rest there)."""
        if not chips:
            return
        t = self.out.t
        pickup = self._pickups.get(seat)
        if pickup is not None and not landed.startswith("bet_") and not laid:
            sure, landed_sure = min(sure, pickup.sure), min(landed_sure, pickup.sure)
        if pickup is not None:  # booked at once: the hand no longer holds these chips
            pickup.value -= _value(chips)
        else:  # landed before the stack was seen to shrink (it was under the hand): a credit for that
            self._pickups[seat] = _Pickup(seat=seat, t=t, value=-_value(chips), chips=())
        pending = self._landing
        if pending is not None and (pending.seat, pending.landed) == (seat, landed) \
                and t - pending.last <= self.config.trip_merge_s:
            pending.chips, pending.last, pending.sure = _sum(pending.chips, chips), t, min(pending.sure, sure)
            pending.landed_sure = min(pending.landed_sure, landed_sure)
            return
        self.flush()
        self._landing = _Landing(seat=seat, landed=landed, chips=chips, t_start=pickup.t if pickup else t, last=t,
                                 sure=sure, landed_sure=landed_sure)

    def flush(self) -> None:
        """Publish the push whose chips have landed."""
        pending, self._landing = self._landing, None
        if pending is None:
            return
        seat = pending.seat
        if self._last_pusher is not None and self._last_pusher != seat:
            self._trips.clear()
        trip = self._trips.get(seat, 0) + 1
        self._trips[seat] = trip
        self._last_pusher = seat
        value = _value(pending.chips)
        self.out.emit(ChipsPushed, seat=seat, trip=trip, chips=_chips(pending.chips), value=value,
                      t_start=min(pending.t_start, self.out.t), landed_zone=pending.landed,
                      confidence=round(pending.sure, 3), landed_confidence=round(pending.landed_sure, 3))

    def _stack_grew(self, seat: int, chips: ChipContent, delta: int, *, sure: float) -> None:
        pickup = self._pickups.get(seat)
        if pickup is not None and pickup.value > 0:  # chips put back
            pickup.value -= delta
            if pickup.value <= 0:
                del self._pickups[seat]
            return
        if _take(self._returns, delta) > 0:
            self._rail_in(seat, chips, sure=sure)

    def _pot_grew(self, chips: ChipContent, delta: int, *, sure: float, landed_sure: float, since: float) -> None:
        just_gathered = any(self.out.t - t <= self.config.gather_misread_s for t, _ in self._gathered)
        left = _take(self._gathered, delta)
        _take(self._returns, delta - left)  # gathered chips went to the pot: they can no longer go back to a stack
        if 0 < left < delta and just_gathered and sure < self.config.tap_sure:
            return  # a gather read a few chips long, unsure: no splash (see the module notes)
        if left <= 0:
            return
        picked = [p for p in self._pickups.values() if p.value > 0]
        laid = {seat for zone, seat in self._reached_by if zone == "pot" and self._laid_by(seat, "pot", since=since)}
        laying = [p for p in picked if p.seat in laid]
        # The seat whose own hand laid the chips there, else the one that picked chips up last (from video a stack
        # read again unsure is a pick-up too: the latest alone gave a splash to the wrong seat). No pick-up of the seat
        # whose own hand laid them seen (its stack's shrink read unsure or hidden): that seat still, when one alone
        # did: chips move only in a hand, and a seat that picked chips up elsewhere and never reached the pot did not
        # lay them (tilted 1280x720 splash_01: seat 1's splash given to seat 5, whose stack read 5200 then 4650 unsure
        # 2.3 s before, then seat 5's bet and seat 9's fold called out of turn).
        if laying:
            seat, by_hand = max(laying, key=lambda p: p.t).seat, True
        elif len(laid) == 1:
            seat, by_hand = next(iter(laid)), True
        elif picked:
            seat, by_hand = max(picked, key=lambda p: p.t).seat, False
        else:
            return
        self._land(seat, chips, landed="pot", sure=sure, landed_sure=landed_sure, laid=by_hand)

    def _laid_by(self, seat: int, zone: str, *, since: float) -> bool:
        """Whether the seat's own hand was within reach of the zone while its new chips came to rest (from `lost_s`
        before its new reading was first seen: the hand that lays chips hides them until it lifts)."""
        return self._reached_by.get((zone, seat), -math.inf) >= since - self.config.lost_s

    def _expire(self, t: float) -> None:
        self._gathered = [(w, a) for w, a in self._gathered if t - w <= self.config.gather_window_s]
        self._returns = [(w, a) for w, a in self._returns if t - w <= self.config.gather_window_s]
        for seat in [s for s, p in self._pickups.items() if t - p.t > self.config.pickup_window_s]:
            del self._pickups[seat]

    # -- the rail ---------------------------------------------------------------------------------------------

    def _rail_out(self) -> None:
        """A player's hand that picked chips up and left the table over the rail without landing them."""
        for _, hand in self.hands.ended:
            seat = hand.seat
            pickup = self._pickups.get(seat) if seat is not None else None
            if seat is None or pickup is None or pickup.value <= 0 or hand.rail_position is None \
                    or pickup.t < hand.first_t - 0.5:
                continue
            del self._pickups[seat]
            where = hand.rail_position
            self.out.emit(RailCrossing, direction="out", seat=seat, objects="chips", chips=_chips(pickup.chips),
                          value=pickup.value, position=(round(where[0], 1), round(where[1], 1)),
                          confidence=round(pickup.sure, 3))

    def _rail_in(self, seat: int, chips: ChipContent, *, sure: float) -> bool:
        """A stack grew under its own player's hand with nothing on the table to explain it: chips from below."""
        for track in self.hands.current:
            hand = self.hands.live.get(track.id)
            if hand is None or hand.seat != seat:
                continue
            where = track.first_position
            position = (round(where[0], 1), round(where[1], 1))
            self.out.emit(HandZone, zone=RAIL, seat=seat, action="enter", holding="chips")
            self.out.emit(RailCrossing, direction="in", seat=seat, objects="chips", chips=_chips(chips),
                          value=_value(chips), position=position, confidence=round(sure, 3))
            return True
        return False


def _take(pending: list[tuple[float, int]], amount: int) -> int:
    """Take `amount` from the pending (time, amount) entries, oldest first; returns what they could not cover."""
    left = amount
    while left > 0 and pending:
        when, available = pending[0]
        used = min(available, left)
        left -= used
        if used == available:
            pending.pop(0)
        else:
            pending[0] = (when, available - used)
    return left


_SAME_BOX_IOU = 0.7  # two boxes overlapping this much are one stack boxed twice (`_over_others`)


def _over_others(tracks: list[Track]) -> set[int]:
    """The stacks whose box holds the middles of two or more other stacks' boxes: one box laid over stacks that lie
    side by side (no stack's box can hold two others', they do not stand in one another). From a tilted 4K camera a
    box without a vision id spanning a bet's two 100s, read as seven chips (0.13 sure), was taken for chips come
    with no hand near (a stack where none lay): a false push of 1150 (string_bet_02)."""
    seen = [(track.id, track.seen.box) for track in tracks if isinstance(track.seen, SeenChips)]
    if len(seen) < 3:
        return set()
    boxes = np.array([box for _, box in seen], dtype=np.float32)
    middles = (boxes[:, :2] + boxes[:, 2:]) / 2.0
    merged: set[int] = set()
    for (ident, _), box in zip(seen, boxes, strict=True):
        iou, _ = box_iou(box, boxes)  # itself (IoU 1) and a stack boxed twice are no other stacks
        held = ((box[0] < middles[:, 0]) & (middles[:, 0] < box[2]) & (box[1] < middles[:, 1])
                & (middles[:, 1] < box[3]) & (iou < _SAME_BOX_IOU))
        if int(held.sum()) >= 2:
            merged.add(ident)
    return merged


def _same_chips(one: Track, other: Track) -> bool:
    """Whether two stack tracks were last read holding the same chips."""
    return (isinstance(one.seen, SeenChips) and isinstance(other.seen, SeenChips)
            and Counter(one.seen.denominations) == Counter(other.seen.denominations))


def _more_chips(one: Track, other: Track) -> bool:
    """Whether stack track `one` was last read holding every chip `other` was last read holding, and more."""
    return (isinstance(one.seen, SeenChips) and isinstance(other.seen, SeenChips) and bool(other.seen.denominations)
            and Counter(other.seen.denominations) < Counter(one.seen.denominations))


def _same_places(now: list[_StackRead], then: list[_StackRead] | None, *, mm: float) -> bool:
    """Whether stacks lie where they lay: as many, each of one list within `mm` of one of the other, both ways."""
    if then is None or len(now) != len(then):
        return False
    return (all(any(math.dist(a.position, b.position) <= mm for b in then) for a in now)
            and all(any(math.dist(a.position, b.position) <= mm for b in now) for a in then))


def _stack_reads(stacks: list[tuple[Track, float]]) -> list[_StackRead]:
    return [_StackRead(track.position, track.seen.denominations,
                       min(track.seen.denomination_confidence, track.seen.count_confidence),
                       track.seen.count_confidence, track.seen.denomination_confidence)
            for track, _ in stacks if isinstance(track.seen, SeenChips)]


def _unchanged(then: list[_StackRead], now: list[_StackRead], *, mm: float) -> tuple[set[int], set[int]]:
    """Indices (of `then`, of `now`) of the stacks read the same chips within `mm` of where they lay, paired one
    to one, the closest pairs first; then, among the others, of those read the same chips within `2 * mm`: a stack
    pushed aside by chips laid where it lay (about a chip's width), its chips unchanged. Closest first: from a fused
    pair of 4K cameras (pocket_chips_01) a second box of two 25s read 15 mm off a bet's two 25s, unsure, took their
    place when paired in the order read, and the bet's own stack, read 0.95 sure, became the chips that came: a
    false A3 on a call read 50 over."""
    kept_then: set[int] = set()
    kept_now: set[int] = set()
    for reach in (mm, 2 * mm):
        for i, j in _closest_pairs(then, now, mm=reach, skip=(kept_then, kept_now),
                                   alike=lambda old, new: new.chips == old.chips):
            kept_then.add(i)
            kept_now.add(j)
    return kept_then, kept_now


def _closest_pairs(then: list[_StackRead], now: list[_StackRead], *, mm: float, skip: tuple[set[int], set[int]],
                   alike: Callable[[_StackRead, _StackRead], bool]) -> list[tuple[int, int]]:
    """Indices (of `then`, of `now`, none of `skip`'s) of stacks `alike` within `mm` of each other, paired one to
    one, the closest pairs first."""
    candidates = sorted((math.dist(new.position, old.position), i, j) for i, old in enumerate(then)
                        if i not in skip[0] for j, new in enumerate(now) if j not in skip[1] and alike(old, new))
    used_then: set[int] = set()
    used_now: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for distance, i, j in candidates:
        if distance <= mm and i not in used_then and j not in used_now:
            pairs.append((i, j))
            used_then.add(i)
            used_now.add(j)
    return pairs


def _content_of(reads: Iterable[_StackRead]) -> ChipContent:
    tally: Counter[int] = Counter()
    for read in reads:
        tally.update(read.chips)
    return tuple(sorted(tally.items(), reverse=True))


def _content(stacks: list[tuple[Track, float]]) -> ChipContent:
    return _content_of(_stack_reads(stacks))


def _sureness(stacks: list[tuple[Track, float]]) -> float:
    """How sure a zone's reading is: its least sure stack's values or count (1 for an empty zone)."""
    return min((min(track.seen.denomination_confidence, track.seen.count_confidence) for track, _ in stacks
                if isinstance(track.seen, SeenChips)), default=1.0)


def _visible(stacks: list[tuple[Track, float]], open_count: dict[int, int], *, now: float) -> float:
    """Share of the zone's chips seen uncovered, stack by stack weighed by its count (1.0 for an empty zone): what a
    hand hides is chips, whatever they are worth, and a stack's values are read less surely than its height (from a
    tilted 1280x720 camera a stack of 1000s read as 25s, weighed by value, had made a cover half the stack 0.11 seen;
    read as 1000s with the 500s beside never found, 0.74: hidden_chips_covered_02). A stack hidden now weighs at
    least the count it was last read at rest with no hand near (`open_count`): the box of a stack a hand is covering
    shrinks under the fingers before it is lost, and its last reading is of the part still seen (from 1280x720
    hidden_chips_covered_02: nineteen 100s last read as three, the cover 0.67 seen, not 0.29)."""
    total = 0.0
    seen_chips = 0.0
    for track, visible in stacks:
        seen = track.seen
        weight = float(seen.count if isinstance(seen, SeenChips) and seen.count else 1)
        if track.last_t < now:
            weight = max(weight, float(open_count.get(track.id, 0)))
        total += weight
        seen_chips += weight * visible
    return 1.0 if total == 0 else seen_chips / total
