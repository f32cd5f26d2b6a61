"""Synthetic TableStates for the derivation tests: objects placed at the centre of layout zones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from floorman.core.events import EventBase
from floorman.core.layout import TableLayout
from floorman.core.table_state import PointMm, SeenButton, SeenCard, SeenChips, SeenHand, TableState
from floorman.edge.derive import EventDeriver

LAYOUT = TableLayout.default()
FPS = 30.0


def centre(zone: str, dx: float = 0.0, dy: float = 0.0) -> PointMm:
    x, y = LAYOUT.zone(zone).points.mean(axis=0)
    return float(x) + dx, float(y) + dy


def chips(zone: str, denominations: Sequence[int], *, track: int, dx: float = 0.0,
          visible: float = 1.0, count_confidence: float = 1.0, values_confidence: float = 1.0) -> SeenChips:
    return SeenChips(box=(0, 0, 1, 1), confidence=1.0, position_mm=centre(zone, dx), zone=zone,
                     denominations=tuple(denominations), denomination_confidence=values_confidence,
                     count_confidence=count_confidence, visible_fraction=visible, track_id=track)


def card(zone: str | None, *, track: int, at: PointMm | None = None, face_up: bool = False,
         identity: str | None = None, count: int = 1, sure: float = 1.0) -> SeenCard:
    point = at if at is not None else centre(zone or "board")
    return SeenCard(face_up=face_up, box=(0, 0, 1, 1), confidence=1.0, position_mm=point, zone=zone,
                    identity=identity, identity_confidence=sure if identity else 0.0, count=count, track_id=track)


def hand(at: PointMm, zone: str | None, *, track: int) -> SeenHand:
    return SeenHand(box=(0, 0, 1, 1), confidence=1.0, position_mm=at, zone=zone, track_id=track)


@dataclass
class Scene:
    """What lies on the table now; `frames(n)` renders n TableStates of it."""

    cards: dict[int, SeenCard] = field(default_factory=dict)
    chips: dict[int, SeenChips] = field(default_factory=dict)
    hands: dict[int, SeenHand] = field(default_factory=dict)
    button: SeenButton | None = None
    frame: int = 0

    def frames(self, count: int) -> list[TableState]:
        states = []
        for _ in range(count):
            states.append(TableState(frame=self.frame, t=self.frame / FPS, cards=tuple(self.cards.values()),
                                     chips=tuple(self.chips.values()), hands=tuple(self.hands.values()),
                                     button=self.button))
            self.frame += 1
        return states


def run(deriver: EventDeriver, states: list[TableState]) -> list[EventBase]:
    """Every event the deriver completes over these states, in order."""
    return [event for state in states for event in deriver.update(state)]


def dealer_gathers(deriver: EventDeriver, scene: Scene, *, bet_track: int, bet_zone: str,
                   pot: SeenChips) -> list[EventBase]:
    """The dealer's hand (track 60) comes over its rail, reaches the bet (chips track `bet_track` in `bet_zone`),
    takes it and lays `pot` in the pot, where it rests 12 frames (the hand still there)."""
    scene.hands[60] = hand(LAYOUT.dealer_position, "rail_edge", track=60)
    events = run(deriver, scene.frames(2))
    scene.hands[60] = hand(centre(bet_zone, 0, -10), bet_zone, track=60)
    events += run(deriver, scene.frames(6))
    del scene.chips[bet_track]
    scene.hands[60] = hand(centre("pot", 0, -10), "pot", track=60)
    scene.chips[pot.track_id if pot.track_id is not None else 0] = pot
    events += run(deriver, scene.frames(12))
    return events
