"""Cards: `zone_cards` per card zone and `card_dealt` for each card that leaves the deck stub and lands.

A zone's content is made of the cards at rest in it (a card in flight makes none), plus the cards a hand hides
there for now; it must settle before it counts. A card whose track began on or near the deck zone came from
the stub; the first time it settles in a zone (a hole zone, the board, the muck as a burn card, or face up on
the deck as a rabbit card) it is dealt. A dealt card flies faster than a tracker links from one frame to the
next, so a card from the stub lost in flight continues as the next new card track that appears within reach of
where it was lost (`flight_gap_s`, `flight_speed_mm_s`), or as a second box seen beside it (`same_card_mm`)
since before it was lost; a lost track whose flight another took over is matched to no later sighting (the vision
gives lost ids to new objects, the next card off the stub among them); one first seen near the stub that then
moves towards it came from elsewhere (folded cards slid past the deck to the muck beyond it). A new track within
`same_card_mm` of a placed card is that card again, not a card dealt: found again where it lay, or a second box
on it while it is seen (a card partly covered by a hand is read as its uncovered part); on the board, where cards
lie apart, of two tracks at rest within `same_card_mm` of each other the later is a second box on the earlier's card
even when both came to rest together. The stub itself (a pile
read as many cards, or a face-down card at rest on the deck zone), seen or hidden under a hand, is no card of the
deck zone's content. Nor is the dealer button, which the detector calls a card at times: a card box where the
button lies, less sure than the button there, is dropped (`ButtonDeriver.read_as_card`). Cards reaching the muck
within `confirm_window_s` of a fold are the fold's, however they were followed there (a track handed over to the
vision's new id is the same card, not one more lost in the pile).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from floorman.core.events import CardDealt, ZoneCards
from floorman.core.layout import TableLayout, ZoneKind
from floorman.core.table_state import PointMm, SeenCard, TableState
from floorman.edge.derive import DeriveConfig, Emitter, zone_seat
from floorman.edge.derive_hands import ButtonDeriver, HandDeriver, ZoneDeriver, distance_to_zone
from floorman.edge.derive_track import Track

CardContent = tuple[tuple[str, ...], int]
CardShape = tuple[int, int]  # face-up cards (on the board read or not, elsewhere read), face-down cards
_KINDS = (ZoneKind.HOLE, ZoneKind.BOARD, ZoneKind.MUCK, ZoneKind.DECK)
FROM_DECK = "from_deck"
PLACED = "placed"
CONTINUED = "continued"  # a card from the stub lost in flight whose flight another track took over
LEFT = "left"  # a card from the stub seen moving off it, or in flight: a card left the stub


class CardDeriver(ZoneDeriver[CardShape]):
    """Card zones and deals."""

    def __init__(self, layout: TableLayout, *, config: DeriveConfig, out: Emitter, hands: HandDeriver,
                 button: ButtonDeriver | None = None) -> None:
        super().__init__(layout, config=config, out=out, hands=hands, kinds=_KINDS, predict_s=config.card_predict_s)
        self.button = button
        """Where the dealer button lies: a card box on it is the button read as a card, no card."""
        self._deck = layout.zone("deck").points
        self._members: dict[str, set[int]] = {name: set() for name in self.zones}
        self.last_from_deck = -1.0
        """When a card last left the deck stub: first seen there, then seen moving (a box seen once on the stub,
        under the dealer's hand, is no card leaving it)."""
        self.dealt_since_shuffle = 0
        self.hole_dealt: dict[str, int] = {}
        """Cards dealt to each hole zone since the shuffle: a fold takes them all, though two hole cards lying one on
        the other show as one box (a fold counted as one card took the second, reaching the muck, for a burn)."""
        self._votes: dict[int, dict[str, float]] = {}
        """Per face-up card track: the identities it was read as, each weighted by how sure the reading was."""
        self.absorbed = 0
        """Cards that slid onto the muck pile and were lost in it (a fold or a burn landing on the pile is seen as
        the pile's boxes): counted in the muck until the next shuffle."""
        self._resting: dict[int, int] = {}  # muck tracks from the stub not counted yet: frames seen at rest
        self._folded: tuple[float, int] = (-math.inf, 0)
        """When a player's hand last folded (its hole zone emptied under it) and how many of those cards have not
        reached the muck yet: cards reaching the muck soon after are them, not burns (`_folds_card`)."""

    def _hidden(self, track: Track) -> bool:
        """Whether an unseen card is under a hand where it lay at rest. A box seen in fewer than `settle_frames`
        frames is none: a second box on a card in flight, seen once by the stub under the dealer's hand, had been
        kept there as a face-up card (a rabbit card) and took over the next card dealt."""
        return (track.observations >= self.config.settle_frames and track.zone in self._settle
                and track.rest_zone == track.zone and self.hands.near(track.position, self.config.cover_mm))

    @staticmethod
    def _renewed(track: Track) -> bool:
        """Whether a card's track lost in flight names no card seen again: once another track took its flight over,
        its card is that one. From a tilted 4K camera the vision's id of a card
        dealt to seat 1 came back on the next card leaving the stub, 380 mm off (out_of_turn_01), and a card without
        an id leaving the stub was matched to the lost track of the last card, 88 mm off, then taken for a card
        moving towards the stub (string_bet_01): both deals to seat 3, and to seat 5, were lost."""
        return CONTINUED in track.marks

    def _towards_deck(self, track: Track) -> bool:
        """Whether a card first seen near the stub then moved towards it: a card from elsewhere passing by (folded
        cards slid across the table to a muck beyond the deck), not one leaving the stub."""
        before, now = self._deck_distance(track.first_position), self._deck_distance(track.position)
        return now < before - self.config.still_mm

    def _rides_along(self, track: Track, current: list[Track]) -> bool:
        """Whether a card first seen at the stub moves beside a card from elsewhere, the same way: the lower card
        of a fold slid past the stub, uncovered as the two spread (within 2 x same_card_mm, directions within
        45 degrees). A card from elsewhere is any but one leaving the stub now: a hole card once dealt from the stub
        and placed is one (a fold's top card followed from its hole zone had been skipped, and the lower card, first
        seen on the stub as it slid past, counted as a burn: tilted clean_hand_05). Such a card's way runs from where
        it last lay at rest, and it must have moved off it by `same_card_mm`: a hole card nudged as the next card
        dealt lands on it is no fold (its way from the stub is the new card's)."""
        moved = (track.position[0] - track.first_position[0], track.position[1] - track.first_position[1])
        for other in current:
            leaving = FROM_DECK in other.marks and PLACED not in other.marks
            if other.id == track.id or other.still or leaving or other.observations < 3:
                continue
            if other.distance_to(track.position) > 2.0 * self.config.same_card_mm:
                continue
            origin = other.rest_position or other.first_position
            way = (other.position[0] - origin[0], other.position[1] - origin[1])
            if other.rest_position is not None and math.hypot(*way) <= self.config.same_card_mm:
                continue
            norm = math.hypot(*moved) * math.hypot(*way)
            if norm > 0 and (moved[0] * way[0] + moved[1] * way[1]) / norm >= math.cos(math.radians(45.0)):
                return True
        return False

    def _hand_flight_over(self, lost: Track, current: list[Track]) -> None:
        """A card from the stub lost in flight while a second box on it, seen beside it since before it was lost,
        flies on: that box takes the flight over (it continues it, as a track appearing after the loss does). From
        a 1280x720 camera a card dealt to seat 3 was boxed twice 25 mm apart as it slowed; the box followed from the
        stub was lost, the other landed, and the deal was lost (out_of_turn_01)."""
        if not {FROM_DECK, LEFT} <= lost.marks or lost.marks & {PLACED, CONTINUED}:
            return
        twins = [t for t in current if not t.marks & {FROM_DECK, PLACED} and t.first_t <= lost.last_t
                 and math.dist(t.first_position, lost.position) <= self.config.same_card_mm]
        if twins:
            twin = min(twins, key=lambda t: math.dist(t.first_position, lost.position))
            twin.marks.update((FROM_DECK, LEFT))
            lost.marks.add(CONTINUED)

    def _deck_distance(self, point: PointMm) -> float:
        """Millimetres from `point` to the deck zone (0 inside it)."""
        return distance_to_zone(point, self._deck)

    def _from_deck(self, track: Track) -> bool:
        if track.first_zone == "deck":
            return True
        return self._deck_distance(track.first_position) <= self.config.deck_mm

    def update(self, state: TableState) -> int:
        """Read the card zones of this frame; returns the number of cards dealt."""
        button = self.button
        cards = state.cards if button is None else [c for c in state.cards if not button.read_as_card(c, state.t)]
        current, ended = self.tracker.update(cards, frame=state.frame, t=state.t, hidden=self._hidden,
                                             renewed=self._renewed)
        dealt = self._absorb(ended)
        self._vote(current)
        contents: dict[str, list[Track]] = {name: [] for name in self.zones}
        left_now = False
        for track in current:
            if track.observations == 1 and self._doubles(track, current):
                track.marks.add(PLACED)
            elif track.observations == 1 and self._from_deck(track):
                track.marks.add(FROM_DECK)
            elif track.observations == 1 and self._continues_flight(track, current):
                track.marks.update((FROM_DECK, LEFT))
                self.last_from_deck = state.t
            elif track.observations == 1 and self._reacquires(track, current):
                track.marks.add(PLACED)
            elif (track.observations == 2 and FROM_DECK in track.marks
                  and (self._towards_deck(track) or self._rides_along(track, current))):
                track.marks.discard(FROM_DECK)
            if FROM_DECK in track.marks and LEFT not in track.marks and not self._is_stub(track) \
                    and track.distance_to(track.first_position) > self.config.still_mm:
                track.marks.add(LEFT)
                self.last_from_deck = max(self.last_from_deck, track.first_t)
                left_now = True
            if track.still and track.zone in contents and not self._is_stub(track):
                contents[track.zone].append(track)
        if left_now:
            dealt += self._absorb(self._lost_in_pile(current))
        for track in self.tracker.unseen(current):
            self._hand_flight_over(track, current)
            if track.zone in contents and self._hidden(track) and not self._is_stub(track):
                contents[track.zone].append(track)
        if "board" in contents:
            contents["board"] = self._one_per_card(contents["board"])
        for name in self.zones:
            tracks = contents[name]
            settle = self._settle[name]
            first, before = not settle.known, settle.committed
            if settle.observe(self._shape(name, tracks), state.t):
                if before is not None and zone_seat(name) is not None and _count(settle.committed) < _count(before):
                    confirmed = self.hands.confirm(name, holding="cards")  # the hand did more than pass over them
                    if confirmed and _count(settle.committed) == 0:  # a fold takes them all (a hand hides a few)
                        self._fold(max(_count(before), self.hole_dealt.pop(name, 0)))
                dealt += self._commit(name, tracks, announce=not first or bool(tracks))
        return dealt + (self._covering_burns(contents["muck"]) if "muck" in contents else 0)

    def _vote(self, current: list[Track]) -> None:
        """Add this frame's identity readings to each card's votes (forgetting the cards no longer followed)."""
        for gone in self._votes.keys() - self.tracker.tracks.keys():
            del self._votes[gone]
        for track in current:
            seen = track.seen
            if isinstance(seen, SeenCard) and seen.face_up and seen.identity is not None:
                votes = self._votes.setdefault(track.id, {})
                votes[seen.identity] = votes.get(seen.identity, 0.0) + max(seen.identity_confidence, 1e-3)

    def identity(self, track: Track) -> str | None:
        """A face-up card's identity: the one its readings so far back most (a card is read again in each frame; a
        hand's shadow or a blur misreads some frames, not most). None for a face-down card or one never read."""
        seen = track.seen
        if not isinstance(seen, SeenCard) or not seen.face_up:
            return None
        votes = self._votes.get(track.id)
        if not votes:
            return seen.identity
        return max(votes.items(), key=lambda item: (item[1], item[0] == seen.identity))[0]

    def _absorb(self, ended: list[Track]) -> int:
        """Count the cards lost in the muck pile (`absorbed`); one that left the stub and never came to rest
        elsewhere is a burn that landed on the pile: dealt to the muck (returns how many). Not a fold's card
        (`_folds_card`): folded cards slid past the stub to a muck beyond it look like cards leaving it."""
        burns = 0
        for track in ended:
            if not self._into_muck(track) or track.handed_over or CONTINUED in track.marks:
                continue  # a card handed over to the vision's id, or whose flight another track took over, lives on
            self.absorbed += 1
            fold_card = self._folds_card()  # (taken off the fold's cards yet to come to rest either way)
            if FROM_DECK in track.marks and LEFT in track.marks and not track.marks & {PLACED, CONTINUED} \
                    and not fold_card:
                self._burn()
                burns += 1
        return burns

    def _lost_in_pile(self, current: list[Track]) -> list[Track]:
        """Cards from the stub lost in the muck zone and not seen since (a burn landing on the pile is seen as the
        pile's box): once the next card leaves the stub they are ended at once, not `lost_s` later, so that the burn
        is dealt before that card (from a 1280x720 camera ~50 degrees from vertical the turn's burn, ended 0.8 s after
        it landed, came after the turn card: an E4 "no burn", an E2, then an E4 "two burns" at the river, under ggc)."""
        return [self.tracker.end(t) for t in self.tracker.unseen(current)
                if self._into_muck(t) and {FROM_DECK, LEFT} <= t.marks and not t.marks & {PLACED, CONTINUED}
                and not t.handed_over and not self._hidden(t)]

    def _covering_burns(self, tracks: list[Track]) -> int:
        """A card that left the stub and rests in the muck while the pile's count stays as it was (it lies over one
        of the pile's cards, whose box is lost under it): a burn, once it has rested there `settle_frames` frames."""
        members, dealt = self._members["muck"], 0
        resting, self._resting = self._resting, {}
        for track in tracks:
            if track.id in members or PLACED in track.marks or not {FROM_DECK, LEFT} <= track.marks:
                continue
            self._resting[track.id] = rested = resting.get(track.id, 0) + 1
            if rested < self.config.settle_frames:
                continue
            track.marks.add(PLACED)
            members.add(track.id)
            if not self._folds_card():
                self._burn()
                dealt += 1
        return dealt

    def _burn(self) -> None:
        self.out.emit(CardDealt, to_zone="muck", seat=None, face_up=False, card=None)
        self.dealt_since_shuffle += 1

    def _fold(self, cards: int) -> None:
        """A player's hand took the seat's `cards` hole cards (the zone emptied under it): they are to land in the
        muck within `confirm_window_s`."""
        when, left = self._folded
        self._folded = (self.out.t, cards + (left if self.out.t - when <= self.config.confirm_window_s else 0))

    def _folds_card(self) -> bool:
        """Whether a card reaching the muck now (at rest, or lost in the pile) is one of a fold's (its player's hand
        took it from the hole zone within `confirm_window_s`, and fewer of its cards have come): one is taken off.
        A hole zone that only lost some of its cards was a hand covering them, no fold: hole counts flicker so
        (a burn after such a flicker had been taken for the fold's card, session 8)."""
        when, left = self._folded
        if left <= 0 or self.out.t - when > self.config.confirm_window_s:
            return False
        self._folded = (when, left - 1)
        return True

    def _into_muck(self, track: Track) -> bool:
        """Whether an ended track is a card that came from elsewhere (a hole zone, the stub) and was lost in the muck
        zone: it joined the pile, whose boxes do not count its cards."""
        return track.zone == "muck" and track.first_zone != "muck" and not self._is_stub(track)

    def holds_cards(self, zone: str) -> bool:
        """Whether the zone's settled content holds a card."""
        settle = self._settle.get(zone)
        return settle is not None and _count(settle.committed) > 0

    def _content(self, zone: str, tracks: list[Track]) -> CardContent:
        face_up, face_down = _content(tracks, identity=self.identity)
        return (face_up, face_down + self.absorbed) if zone == "muck" else (face_up, face_down)

    def _shape(self, zone: str, tracks: list[Track]) -> CardShape:
        """What a zone's content must hold steady to settle: how many cards lie face up and face down. Not the
        face-up cards' names: a card lying still is one card whether it is read 4♦ in one frame and 10♦ in the
        next (its name is the one its readings back most when it settles). On the board a face-up card counts read
        or not: a board card is dealt and opens its street whether or not it can be read (settling on the names
        held a turn card of a 1280x720 video back 3.7 s, unread until the classifier was sure of it, and its
        street's actions were judged on the flop). Elsewhere a face-up card counts once read: a card turned up
        on the stub is a rabbit card only by its name, which comes later than the card."""
        up = sum(1 for t in tracks if isinstance(t.seen, SeenCard) and t.seen.face_up
                 and (zone == "board" or self.identity(t) is not None))
        down = sum(t.seen.count for t in tracks if isinstance(t.seen, SeenCard) and not t.seen.face_up)
        return up, down + (self.absorbed if zone == "muck" else 0)

    def _doubles(self, track: Track, current: list[Track]) -> bool:
        """Whether a new track is a second box on a placed card seen now (a card partly covered by a hand is read as
        its uncovered part, a box of its own)."""
        return any(other.id != track.id and PLACED in other.marks
                   and other.distance_to(track.position) <= self.config.same_card_mm for other in current)

    def _one_per_card(self, tracks: list[Track]) -> list[Track]:
        """The board's cards lie apart: of two tracks resting there within `same_card_mm` of each other, the later
        is a second box on the earlier's card (the part of a card sliding into place, boxed apart as it stops:
        seen together, both had settled as cards dealt, and the flop's third card then counted as the turn)."""
        kept: list[Track] = []
        for track in sorted(tracks, key=lambda t: (t.first_t, -t.observations, t.id)):
            if all(other.distance_to(track.position) > self.config.same_card_mm for other in kept):
                kept.append(track)
        ids = {track.id for track in kept}
        return [track for track in tracks if track.id in ids]

    def _reacquires(self, track: Track, current: list[Track]) -> bool:
        """Whether a new track is a card already placed, lost for a moment and found again where it lay (not a new
        card: a board card found again is not dealt twice)."""
        return self._takes_over(track, current, mark=PLACED, reach=lambda _lost: self.config.same_card_mm)

    def _continues_flight(self, track: Track, current: list[Track]) -> bool:
        """Whether a new track is a card from the stub, lost in flight a moment ago within reach of here."""
        def reach(lost: Track) -> float:
            gap = track.first_t - lost.last_t
            if PLACED in lost.marks or not 0 < gap <= self.config.flight_gap_s:
                return -1.0
            return self.config.flight_speed_mm_s * gap + self.config.match_mm

        return self._takes_over(track, current, mark=FROM_DECK, reach=reach)

    def _takes_over(self, track: Track, current: list[Track], *, mark: str,
                    reach: Callable[[Track], float]) -> bool:
        """Whether a new track continues the nearest unseen track marked `mark` within `reach` of it (mm; negative:
        out of reach); that one is then marked CONTINUED so that no other track takes it over."""
        seen_now = {t.id for t in current}
        best: Track | None = None
        best_d = math.inf
        for lost in self.tracker.tracks.values():
            if lost.id in seen_now or mark not in lost.marks or CONTINUED in lost.marks:
                continue
            d = lost.distance_to(track.position)
            if d <= reach(lost) and d < best_d:
                best, best_d = lost, d
        if best is None:
            return False
        best.marks.add(CONTINUED)
        return True

    @staticmethod
    def _is_stub(track: Track) -> bool:
        seen = track.seen
        return isinstance(seen, SeenCard) and (seen.count > 1 or (track.zone == "deck" and not seen.face_up))

    def _commit(self, zone: str, tracks: list[Track], *, announce: bool) -> int:
        seat = zone_seat(zone)
        before = self._members[zone]
        dealt = 0
        for track in tracks:
            seen = track.seen
            if track.id in before or not isinstance(seen, SeenCard):
                continue
            if PLACED in track.marks:
                if zone == "muck" and track.first_zone != "muck":
                    self._folds_card()  # a fold's card come to rest (placed: a second box by one seen then)
                continue
            if zone == "muck" and self._folds_card():
                continue  # a folded card slid past the stub looks like one leaving it
            if FROM_DECK in track.marks or zone == "board":
                card = self.identity(track)
                self.out.emit(CardDealt, to_zone=zone, seat=seat, face_up=seen.face_up, card=card)
                dealt += 1
                self.dealt_since_shuffle += 1
                if seat is not None:
                    self.hole_dealt[zone] = self.hole_dealt.get(zone, 0) + 1
        for track in tracks:
            track.marks.add(PLACED)
        self._members[zone] = {track.id for track in tracks}
        if announce:
            face_up, face_down = self._content(zone, tracks)
            confidence = min((t.seen.confidence for t in tracks), default=1.0)
            self.out.emit(ZoneCards, zone=zone, seat=seat, face_up=face_up, face_down=face_down,
                          confidence=max(0.0, min(1.0, confidence)))
        return dealt


def _count(shape: CardShape | None) -> int:
    return 0 if shape is None else shape[0] + shape[1]


def _content(tracks: list[Track], *, identity: Callable[[Track], str | None]) -> CardContent:
    """Face-up identities in the order the cards arrived (the board in dealing order), face-down count."""
    up: list[str] = []
    down = 0
    for track in sorted(tracks, key=lambda t: (t.first_t, t.id)):
        seen = track.seen
        if not isinstance(seen, SeenCard):
            continue
        card = identity(track) if seen.face_up else None
        if card is not None:
            up.append(card)
        elif not seen.face_up:
            down += seen.count
    return tuple(up), down
