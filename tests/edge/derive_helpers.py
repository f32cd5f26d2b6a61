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
          visible: float = 1.0, count_confidence: float = 1.0) -> SeenChips:
    return SeenChips(box=(0, 0, 1, 1), confidence=1.0, position_mm=centre(zone, dx), zone=zone,
                     denominations=tuple(denominations), denomination_confidence=1.0,
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
