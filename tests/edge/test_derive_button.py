"""The dealer button read as a card: from video the detector draws a card box on the button (beside its button box,
or instead of it for up to 2.4 s), in the hole zone of the seat it lies by. That box is no hole card."""

from __future__ import annotations

from dataclasses import replace

import pytest

from floorman.core.events import EventBase
from floorman.core.table_state import PointMm, SeenButton
from floorman.edge.derive import DeriveConfig, EventDeriver
from tests.edge.derive_helpers import LAYOUT, Scene, card, centre, run

BUTTON_AT = centre("hole_5", -60, 0)
HOLE_CARD_AT = centre("hole_5", 30, 0)  # 90 mm from the button, as hole cards lie from video (60 mm and more)


def button(at: PointMm, *, sure: float = 0.8) -> SeenButton:
    return SeenButton(box=(0, 0, 1, 1), confidence=sure, position_mm=at, seat=5, track_id=90)


def hole_5_counts(events: list[EventBase]) -> list[int]:
    return [d["face_down"] for e in events if (d := e.model_dump())["type"] == "zone_cards" and d["zone"] == "hole_5"]


def with_hole_card_and_button() -> Scene:
    return Scene(cards={5: card("hole_5", track=5, at=HOLE_CARD_AT)}, button=button(BUTTON_AT))


@pytest.mark.parametrize(("card_sure", "dx", "reach_mm", "expected"), [
    (0.4, 3.0, 30.0, [1]),  # the button read as a card
    (0.9, 3.0, 30.0, [1, 2]),  # surer than the button: a card, the button box is the one misread
    (0.4, 35.0, 30.0, [1, 2]),  # beside the button, out of its reach: a card
    (0.4, 3.0, 0.0, [1, 2]),  # the setting off
])
def test_a_card_box_on_the_button_less_sure_than_it_is_no_card(card_sure: float, dx: float, reach_mm: float,
                                                               expected: list[int]) -> None:
    # The detector called the button a card back, 3 mm from its button box (pocket_chips_02 with seats10: 0.39
    # against 0.78). A faint button box on a real card at showdown (clean_hand_01: 0.34 against 0.55-0.85) makes
    # no card vanish.
    deriver = EventDeriver(LAYOUT, table_id="t1", camera_id="c1", config=DeriveConfig(button_card_mm=reach_mm))
    scene = with_hole_card_and_button()
    events = run(deriver, scene.frames(10))
    scene.cards[40] = replace(card("hole_5", track=40, at=(BUTTON_AT[0] + dx, BUTTON_AT[1])), confidence=card_sure)
    events += run(deriver, scene.frames(20))
    assert hole_5_counts(events) == expected


@pytest.mark.parametrize(("memory_s", "expected"), [(3.0, [1]), (0.5, [1, 2])])
def test_the_button_called_a_card_without_its_own_box_is_no_card_for_a_while(memory_s: float,
                                                                             expected: list[int]) -> None:
    # For 2.4 s the detector saw a card where the button lies and no button at all (pocket_chips_02, seats10).
    deriver = EventDeriver(LAYOUT, table_id="t1", camera_id="c1", config=DeriveConfig(button_memory_s=memory_s))
    scene = with_hole_card_and_button()
    events = run(deriver, scene.frames(10))
    scene.button = None
    scene.cards[40] = replace(card("hole_5", track=40, at=BUTTON_AT), confidence=0.6)
    events += run(deriver, scene.frames(45))
    assert hole_5_counts(events) == expected
