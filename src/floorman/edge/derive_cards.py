"""Cards: `zone_cards` per card zone and `card_dealt` for each card that leaves the deck stub and lands.

A zone's content is made of the cards at rest in it (a card in flight makes none), plus the cards a hand hides
there for now; it must settle before it counts. A card whose track began on or near the deck zone came from
the stub; the first time it settles in a zone (a hole zone, the board, the muck as a burn card, or face up on
the deck as a rabbit card) it is dealt. The stub itself (a pile read as many cards, or a face-down card at
rest on the deck zone) is no card of the deck zone's content.
"""

from __future__ import annotations

from floorman.core.events import CardDealt, ZoneCards
from floorman.core.geometry import as_points, distance_to_boundary
from floorman.core.layout import TableLayout, ZoneKind
from floorman.core.table_state import SeenCard, TableState
from floorman.edge.derive import DeriveConfig, Emitter, zone_seat
from floorman.edge.derive_hands import HandDeriver, ZoneDeriver
from floorman.edge.derive_track import Track

CardContent = tuple[tuple[str, ...], int]
_KINDS = (ZoneKind.HOLE, ZoneKind.BOARD, ZoneKind.MUCK, ZoneKind.DECK)
FROM_DECK = "from_deck"
PLACED = "placed"


class CardDeriver(ZoneDeriver[CardContent]):
    """Card zones and deals."""

    def __init__(self, layout: TableLayout, *, config: DeriveConfig, out: Emitter, hands: HandDeriver) -> None:
        super().__init__(layout, config=config, out=out, hands=hands, kinds=_KINDS)
        self._deck = layout.zone("deck").points
        self._members: dict[str, set[int]] = {name: set() for name in self.zones}
        self.last_from_deck = -1.0
        """When a card last left the deck stub."""
        self.dealt_since_shuffle = 0

    def _hidden(self, track: Track) -> bool:
        return track.zone in self._settle and track.rest_zone == track.zone and self.hands.near(track.position,
                                                                                       self.config.cover_mm)

    def _from_deck(self, track: Track) -> bool:
        if track.first_zone == "deck":
            return True
        return bool(distance_to_boundary(as_points([track.first_position]), self._deck)[0] <= self.config.deck_mm)

    def update(self, state: TableState) -> int:
        """Read the card zones of this frame; returns the number of cards dealt."""
        current, _ = self.tracker.update(state.cards, frame=state.frame, t=state.t, hidden=self._hidden)
        contents: dict[str, list[Track]] = {name: [] for name in self.zones}
        for track in current:
            if track.observations == 1 and self._from_deck(track):
                track.marks.add(FROM_DECK)
                self.last_from_deck = state.t
            if track.still and track.zone in contents and not self._is_stub(track):
                contents[track.zone].append(track)
        for track in self.tracker.unseen(current):
            if track.zone in contents and self._hidden(track):
                contents[track.zone].append(track)
        dealt = 0
        for name in self.zones:
            tracks = contents[name]
            settle = self._settle[name]
            first, before = not settle.known, settle.committed
            if settle.observe(_content(tracks), state.t):
                if before is not None and zone_seat(name) is not None and _count(settle.committed) < _count(before):
                    self.hands.confirm(name, holding="cards")  # a fold: the hand did more than pass over its cards
                dealt += self._commit(name, tracks, announce=not first or bool(tracks))
        return dealt

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
            if track.id in before or PLACED in track.marks or not isinstance(seen, SeenCard):
                continue
            if FROM_DECK in track.marks or zone == "board":
                card = seen.identity if seen.face_up else None
                self.out.emit(CardDealt, to_zone=zone, seat=seat, face_up=seen.face_up, card=card)
                dealt += 1
                self.dealt_since_shuffle += 1
        for track in tracks:
            track.marks.add(PLACED)
        self._members[zone] = {track.id for track in tracks}
        if announce:
            face_up, face_down = _content(tracks)
            confidence = min((t.seen.confidence for t in tracks), default=1.0)
            self.out.emit(ZoneCards, zone=zone, seat=seat, face_up=face_up, face_down=face_down,
                          confidence=max(0.0, min(1.0, confidence)))
        return dealt


def _count(content: CardContent | None) -> int:
    return 0 if content is None else len(content[0]) + content[1]


def _content(tracks: list[Track]) -> CardContent:
    """Face-up identities in the order the cards arrived (the board in dealing order), face-down count."""
    up: list[str] = []
    down = 0
    for track in sorted(tracks, key=lambda t: (t.first_t, t.id)):
        seen = track.seen
        if not isinstance(seen, SeenCard):
            continue
        if seen.face_up and seen.identity is not None:
            up.append(seen.identity)
        elif not seen.face_up:
            down += seen.count
    return tuple(up), down
