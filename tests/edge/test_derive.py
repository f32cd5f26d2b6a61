"""Event derivation with inertia, on synthetic TableStates (objects at the centres of the layout's zones)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from floorman.core.events import EventBase
from floorman.core.table_state import SeenButton, TableState
from floorman.edge.derive import DeriveConfig, EventDeriver
from tests.edge.derive_helpers import FPS, LAYOUT, Scene, card, centre, chips, dealer_gathers, hand, run


def kinds(events: list[EventBase]) -> list[str]:
    return [str(e.model_dump()["type"]) for e in events]


def of(events: list[EventBase], kind: str) -> list[dict[str, object]]:
    return [e.model_dump() for e in events if e.model_dump()["type"] == kind]


def seated(scene: Scene, seat: int, *, track: int) -> None:
    """A hand of `seat` coming over the rail at the seat (its first point decides whose hand it is)."""
    scene.hands[track] = hand(LAYOUT.seat(seat).position, "rail_edge", track=track)


def test_stacks_seen_at_start_are_announced_once(deriver: EventDeriver) -> None:
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1)})
    events = run(deriver, scene.frames(20))
    assert kinds(events) == ["zone_chips"]
    assert of(events, "zone_chips")[0]["value"] == 1000


def test_a_zone_reading_is_as_sure_as_its_least_sure_stack(deriver: EventDeriver) -> None:
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1),
                         2: chips("stack_1", [25] * 4, track=2, dx=60.0, count_confidence=0.3),
                         3: chips("stack_2", [100] * 5, track=3)})
    readings = {e["zone"]: (e["value"], e["confidence"]) for e in of(run(deriver, scene.frames(20)), "zone_chips")}
    assert readings == {"stack_1": (1100, 0.3), "stack_2": (500, 1.0)}


@pytest.mark.parametrize("frames", [1, 2])
def test_flicker_shorter_than_the_settle_makes_no_event(deriver: EventDeriver, frames: int) -> None:
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1)})
    run(deriver, scene.frames(10))
    scene.chips[9] = chips("bet_1", [500], track=9)
    assert run(deriver, scene.frames(frames)) == []
    del scene.chips[9]
    assert run(deriver, scene.frames(10)) == []


def push(scene: Scene, deriver: EventDeriver, *, seat: int, stack_track: int, bet_track: int, left: int,
         landed: list[int]) -> list[EventBase]:
    """Seat's hand picks chips from its stack (leaving `left` 100s) and lands `landed` in its bet zone."""
    events: list[EventBase] = []
    seated(scene, seat, track=50 + seat)
    events += run(deriver, scene.frames(3))
    scene.hands[50 + seat] = hand(centre(f"stack_{seat}", 0, 5), f"stack_{seat}", track=50 + seat)
    scene.chips[stack_track] = chips(f"stack_{seat}", [100] * left, track=stack_track)
    events += run(deriver, scene.frames(6))
    scene.hands[50 + seat] = hand(centre(f"bet_{seat}", 0, 5), f"bet_{seat}", track=50 + seat)
    scene.chips[bet_track] = chips(f"bet_{seat}", landed, track=bet_track, dx=30.0 * (bet_track % 3))
    events += run(deriver, scene.frames(6))
    del scene.hands[50 + seat]
    events += run(deriver, scene.frames(30))
    return events


def test_pushes_are_grouped_into_trips_that_restart_when_another_seat_acts(deriver: EventDeriver) -> None:
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1), 3: chips("stack_3", [100] * 10, track=3)})
    run(deriver, scene.frames(10))
    first = push(scene, deriver, seat=1, stack_track=1, bet_track=101, left=8, landed=[100, 100])
    second = push(scene, deriver, seat=1, stack_track=1, bet_track=102, left=6, landed=[100, 100])
    other = push(scene, deriver, seat=3, stack_track=3, bet_track=103, left=7, landed=[100, 100, 100])
    again = push(scene, deriver, seat=1, stack_track=1, bet_track=104, left=5, landed=[100])
    pushes = [(p["seat"], p["trip"], p["value"], p["landed_zone"]) for p in
              of(first + second + other + again, "chips_pushed")]
    assert pushes == [(1, 1, 200, "bet_1"), (1, 2, 200, "bet_1"), (3, 1, 300, "bet_3"), (1, 1, 100, "bet_1")]
    assert [z["value"] for z in of(first, "zone_chips")] == [800, 200]
    leave = [h for h in of(first, "hand_zone") if h["zone"] == "stack_1" and h["action"] == "leave"]
    assert leave and leave[0]["holding"] == "chips"


def test_a_bet_read_a_chip_short_unsure_is_no_gather_of_the_trips(deriver: EventDeriver) -> None:
    """Seat 1 bets 300, then brings 300 more; as its hand lands them the bet is read 200 at 0.05 for a moment, then
    600: the second trip is trip 2 of the same action (a sure shrink restarts the trips: a gather), of 300 as sure
    as the readings before and after (the unsure 200 is never the bet's content)."""
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1)})
    run(deriver, scene.frames(10))
    events = push(scene, deriver, seat=1, stack_track=1, bet_track=101, left=7, landed=[100] * 3)
    scene.hands[51] = hand(centre("stack_1", 0, 5), "stack_1", track=51)
    scene.chips[1] = chips("stack_1", [100] * 4, track=1)
    events += run(deriver, scene.frames(6))
    scene.hands[51] = hand(centre("bet_1", 0, 5), "bet_1", track=51)
    scene.chips[101] = chips("bet_1", [100] * 2, track=101, dx=30.0 * (101 % 3), count_confidence=0.05)
    events += run(deriver, scene.frames(6))
    scene.chips[101] = chips("bet_1", [100] * 6, track=101, dx=30.0 * (101 % 3))
    events += run(deriver, scene.frames(6))
    del scene.hands[51]
    events += run(deriver, scene.frames(30))
    assert [(p["trip"], p["value"], p["confidence"]) for p in of(events, "chips_pushed")] == [(1, 300, 1.0),
                                                                                               (2, 300, 1.0)]
    assert [z["value"] for z in of(events, "zone_chips") if z["zone"] == "bet_1"] == [300, 600]


def test_a_bet_read_short_surely_is_committed(deriver: EventDeriver) -> None:
    """A bet read with fewer chips, surely, is what the bet holds now (a player took chips back: that is the rules'
    to judge): only unsure shrinks wait."""
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1)})
    run(deriver, scene.frames(10))
    events = push(scene, deriver, seat=1, stack_track=1, bet_track=101, left=7, landed=[100] * 3)
    scene.hands[51] = hand(centre("bet_1", 0, 5), "bet_1", track=51)
    scene.chips[101] = chips("bet_1", [100] * 2, track=101, dx=30.0 * (101 % 3))
    events += run(deriver, scene.frames(12))
    del scene.hands[51]
    events += run(deriver, scene.frames(30))
    assert [z["value"] for z in of(events, "zone_chips") if z["zone"] == "bet_1"] == [300, 200]


def test_a_bet_read_unsure_may_be_mended_by_a_lower_unsure_reading(deriver: EventDeriver) -> None:
    """A bet whose content was itself read unsure (a one-chip bet read as three at 0.3) is not held when read lower,
    unsure too: the lower reading may be the right one."""
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1),
                         101: chips("bet_1", [100] * 3, track=101, count_confidence=0.3)})
    events = run(deriver, scene.frames(10))
    scene.hands[51] = hand(centre("bet_1", 0, 5), "bet_1", track=51)
    scene.chips[101] = chips("bet_1", [100] * 2, track=101, count_confidence=0.3)
    events += run(deriver, scene.frames(12))
    del scene.hands[51]
    events += run(deriver, scene.frames(30))
    assert [(z["value"], z["confidence"]) for z in of(events, "zone_chips") if z["zone"] == "bet_1"] == [
        (300, 0.3), (200, 0.3)]


def test_chips_landing_close_together_are_one_trip(deriver: EventDeriver) -> None:
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1)})
    run(deriver, scene.frames(10))
    seated(scene, 1, track=51)
    scene.hands[51] = hand(centre("stack_1"), "stack_1", track=51)
    scene.chips[1] = chips("stack_1", [100] * 7, track=1)
    events = run(deriver, scene.frames(6))
    scene.chips[101] = chips("bet_1", [100, 100], track=101)
    events += run(deriver, scene.frames(4))
    scene.chips[102] = chips("bet_1", [100], track=102, dx=40)
    del scene.hands[51]
    events += run(deriver, scene.frames(30))
    assert [(p["trip"], p["value"]) for p in of(events, "chips_pushed")] == [(1, 300)]


def test_a_card_from_the_stub_is_dealt_once_it_rests_in_a_zone(deriver: EventDeriver) -> None:
    scene = Scene(cards={1: card("deck", track=1, count=52, at=centre("deck"))})
    assert run(deriver, scene.frames(10)) == []
    scene.cards[7] = card("deck", track=7, at=centre("deck", 30))
    events = run(deriver, scene.frames(1))
    for step in range(1, 4):  # in flight: no zone content
        scene.cards[7] = card(None, track=7, at=centre("deck", -80 * step, 40 * step))
        events += run(deriver, scene.frames(1))
    scene.cards[7] = card("hole_1", track=7, at=centre("hole_1"))
    events += run(deriver, scene.frames(10))
    assert kinds(events) == ["card_dealt", "zone_cards"]
    dealt, zone = events
    assert dealt.model_dump()["to_zone"] == "hole_1" and dealt.model_dump()["seat"] == 1
    assert zone.model_dump()["face_down"] == 1


def test_a_card_lost_in_flight_continues_as_the_next_track_near_its_path(deriver: EventDeriver) -> None:
    def deal(deriver: EventDeriver) -> list[tuple[str, int]]:
        # The tracker gives the flying card a new id at every frame (~140 mm per frame) and misses it once.
        scene = Scene(cards={1: card("deck", track=1, count=52, at=centre("deck"))})
        run(deriver, scene.frames(10))
        (x0, y0), (x1, y1) = centre("deck", 30), centre("hole_1")
        events: list[EventBase] = []
        for step in range(6):
            scene.cards = {1: scene.cards[1]}
            if step != 3:
                zone = "deck" if step == 0 else "hole_1" if step == 5 else None
                at = (x0 + (x1 - x0) * step / 5, y0 + (y1 - y0) * step / 5)
                scene.cards[20 + step] = card(zone, track=20 + step, at=at)
            events += run(deriver, scene.frames(1))
        events += run(deriver, scene.frames(10))
        return [(e["to_zone"], e["seat"]) for e in of(events, "card_dealt")]

    assert deal(deriver) == [("hole_1", 1)]
    without = EventDeriver(LAYOUT, table_id="t1", camera_id="c1", config=DeriveConfig(flight_gap_s=0.0))
    assert deal(without) == []  # without the continuation the card never left the stub


def test_a_new_card_far_from_any_lost_flight_is_not_dealt(deriver: EventDeriver) -> None:
    scene = Scene(cards={1: card("deck", track=1, count=52, at=centre("deck"))})
    run(deriver, scene.frames(10))
    scene.cards[7] = card("deck", track=7, at=centre("deck", 30))
    events = run(deriver, scene.frames(1))
    del scene.cards[7]
    events += run(deriver, scene.frames(10))  # lost for 0.33 s: longer than flight_gap_s
    scene.cards[8] = card("hole_4", track=8, at=centre("hole_4"))
    events += run(deriver, scene.frames(10))
    assert of(events, "card_dealt") == []


def test_a_board_card_lost_and_found_again_where_it_lay_is_not_dealt_twice(deriver: EventDeriver) -> None:
    scene = Scene(cards={1: card("deck", track=1, count=40, at=centre("deck"))})
    run(deriver, scene.frames(5))
    scene.cards[8] = card("board", track=8, face_up=True, identity="AS", at=centre("board"))
    events = run(deriver, scene.frames(10))
    del scene.cards[8]
    events += run(deriver, scene.frames(3))
    scene.cards[9] = card("board", track=9, face_up=True, identity="AS", at=centre("board", 2, 1))
    events += run(deriver, scene.frames(10))
    assert [e["card"] for e in of(events, "card_dealt")] == ["AS"]


def test_a_board_card_is_dealt_face_up_with_its_identity(deriver: EventDeriver) -> None:
    scene = Scene(cards={1: card("deck", track=1, count=40, at=centre("deck"))})
    run(deriver, scene.frames(5))
    scene.cards[8] = card("board", track=8, face_up=True, identity="AS", at=centre("board"))
    events = run(deriver, scene.frames(10))
    assert [(e["to_zone"], e["face_up"], e["card"]) for e in of(events, "card_dealt")] == [("board", True, "AS")]
    assert of(events, "zone_cards")[0]["face_up"] == ("AS",)


def test_a_card_takes_the_identity_most_of_its_readings_back(deriver: EventDeriver) -> None:
    """A board card read surely as 5C while it slides into place, then as 5S for the frames a hand's shadow
    blurs it at rest: it is the 5C (reading each frame alone dealt the 5S)."""
    scene = Scene(cards={1: card("deck", track=1, count=40, at=centre("deck"))})
    run(deriver, scene.frames(5))
    events: list[EventBase] = []
    for step in range(4, 0, -1):
        scene.cards[8] = card("board", track=8, face_up=True, identity="5C", sure=0.9, at=centre("board", 20 * step))
        events += run(deriver, scene.frames(1))
    scene.cards[8] = card("board", track=8, face_up=True, identity="5S", sure=0.4, at=centre("board"))
    events += run(deriver, scene.frames(5))
    assert [e["card"] for e in of(events, "card_dealt")] == ["5C"]
    assert [z["face_up"] for z in of(events, "zone_cards")] == [("5C",)]


def test_a_board_card_is_dealt_when_it_settles_however_its_name_is_read(deriver: EventDeriver) -> None:
    """A small turn card read as one name in a frame, another or none in the next is one card lying still: it is
    dealt (and its street opened) when it settles, named by its readings so far (a 1280x720 video's turn card,
    unread for 3.7 s, was dealt only once read)."""
    scene = Scene(cards={1: card("deck", track=1, count=40, at=centre("deck"))})
    run(deriver, scene.frames(5))
    events: list[EventBase] = []
    for frame, name in enumerate(["4D", None, "10D", None, "4D", None, None, "10D", None, "4D"]):
        scene.cards[8] = card("board", track=8, face_up=True, identity=name, sure=0.4, at=centre("board"))
        events += run(deriver, scene.frames(1))
        if frame == 5:
            assert [e["card"] for e in of(events, "card_dealt")] == ["4D"]  # within the settle, not at the end
    scene.cards[9] = card("board", track=9, face_up=True, at=centre("board", 80))  # never read
    events += run(deriver, scene.frames(10))
    assert [e["card"] for e in of(events, "card_dealt")] == ["4D", None]


def test_a_card_turned_up_on_the_stub_waits_for_its_name(deriver: EventDeriver) -> None:
    """A face-up card on the deck (a rabbit card) is dealt once read: unread it is no evidence of which card."""
    scene = Scene(cards={1: card("deck", track=1, count=40, at=centre("deck"))})
    run(deriver, scene.frames(5))
    scene.cards[8] = card("deck", track=8, face_up=True, at=centre("deck", 60))
    assert of(run(deriver, scene.frames(10)), "card_dealt") == []
    scene.cards[8] = card("deck", track=8, face_up=True, identity="KC", sure=0.4, at=centre("deck", 60))
    assert [e["card"] for e in of(run(deriver, scene.frames(10)), "card_dealt")] == ["KC"]


def test_the_button_moves_only_when_it_settles(deriver: EventDeriver) -> None:
    def button_at(seat: int) -> SeenButton:
        x, y = LAYOUT.seat(seat).position
        return SeenButton(box=(0, 0, 1, 1), confidence=1.0, position_mm=(x * 0.8, y * 0.8))

    scene = Scene(button=button_at(3))
    events = run(deriver, scene.frames(5))
    scene.button = button_at(5)
    events += run(deriver, scene.frames(1))
    scene.button = button_at(3)
    events += run(deriver, scene.frames(5))
    scene.button = button_at(5)
    events += run(deriver, scene.frames(5))
    assert [e["seat"] for e in of(events, "button_moved")] == [3, 5]


def test_a_hand_resting_on_a_stack_covers_it_but_a_passing_one_does_not(deriver: EventDeriver) -> None:
    scene = Scene(chips={1: chips("stack_1", [100] * 10, track=1)})
    run(deriver, scene.frames(5))
    seated(scene, 1, track=51)
    run(deriver, scene.frames(2))
    scene.hands[51] = hand(centre("stack_1"), "stack_1", track=51)
    scene.chips[1] = chips("stack_1", [100] * 10, track=1, visible=0.3)
    passing = run(deriver, scene.frames(10))  # a third of a second: no cover
    assert of(passing, "zone_chips") == []
    resting = run(deriver, scene.frames(40))
    covered = of(resting, "zone_chips")
    assert len(covered) == 1 and covered[0]["visible_fraction"] == pytest.approx(0.3)
    del scene.hands[51]
    scene.chips[1] = chips("stack_1", [100] * 10, track=1)
    uncovered = of(run(deriver, scene.frames(40)), "zone_chips")
    assert [z["visible_fraction"] for z in uncovered] == [1.0]


def picked_up(deriver: EventDeriver, *, value: int, left: int, sure: float = 1.0) -> tuple[Scene, list[EventBase]]:
    """Seat 1 (hand track 51) sits at a stack of 5 chips of `value` (counted `sure`), reaches it and lifts all but
    `left`."""
    scene = Scene(chips={1: chips("stack_1", [value] * 5, track=1, count_confidence=sure)})
    run(deriver, scene.frames(5))
    seated(scene, 1, track=51)
    run(deriver, scene.frames(3))
    scene.hands[51] = hand(centre("stack_1"), "stack_1", track=51)
    scene.chips[1] = chips("stack_1", [value] * left, track=1, count_confidence=sure)
    return scene, run(deriver, scene.frames(8))


def test_chips_picked_up_and_taken_over_the_rail_cross_it_out(deriver: EventDeriver) -> None:
    scene, events = picked_up(deriver, value=1000, left=3)
    scene.hands[51] = hand(LAYOUT.seat(1).position, "rail_edge", track=51)
    events += run(deriver, scene.frames(3))
    del scene.hands[51]
    events += run(deriver, scene.frames(30))
    crossings = of(events, "rail_crossing")
    assert [(c["direction"], c["seat"], c["value"]) for c in crossings] == [("out", 1, 2000)]


def test_chips_added_under_a_players_hand_came_from_below_the_rail(deriver: EventDeriver) -> None:
    scene = Scene(chips={1: chips("stack_4", [500] * 4, track=1)})
    run(deriver, scene.frames(5))
    seated(scene, 4, track=54)
    run(deriver, scene.frames(3))
    scene.hands[54] = hand(centre("stack_4"), "stack_4", track=54)
    scene.chips[2] = chips("stack_4", [500, 500], track=2, dx=45)
    events = run(deriver, scene.frames(10))
    assert [(c["direction"], c["seat"], c["value"]) for c in of(events, "rail_crossing")] == [("in", 4, 1000)]
    assert kinds(events).index("rail_crossing") < kinds(events).index("zone_chips")


@pytest.mark.parametrize(("before", "beside", "beside_after", "beside_sure", "sure"), [
    # a stack of 500s counted at 0.6 before the visit; a stack of 100s beside it, read the same where it lay, moved
    # nothing and does not count however unsure (0.3)
    (0.6, (100,) * 5, (100,) * 5, 0.3, 0.6),
    # the 500s counted at 0.95; 25s beside them, hidden behind a neighbour, read again a chip short, unsure (0.4):
    # they say nothing of the 500s that came (pocket_chips_01 from the tilted 4K camera, session 40)
    (0.95, (25,) * 5, (25,) * 4, 0.4, 0.95),
])
def test_a_rail_crossing_carries_how_sure_the_stack_readings_behind_it_were(
        deriver: EventDeriver, before: float, beside: tuple[int, ...], beside_after: tuple[int, ...],
        beside_sure: float, sure: float) -> None:
    # Two 500s added under the player's hand on top of seat 4's 500s (read at 0.95 after).
    scene = Scene(chips={1: chips("stack_4", [500] * 4, track=1, count_confidence=before),
                         3: chips("stack_4", beside, track=3, dx=-45, count_confidence=beside_sure)})
    run(deriver, scene.frames(5))
    seated(scene, 4, track=54)
    run(deriver, scene.frames(3))
    scene.hands[54] = hand(centre("stack_4"), "stack_4", track=54)
    scene.chips[1] = chips("stack_4", [500] * 6, track=1, count_confidence=0.95)
    scene.chips[3] = replace(scene.chips[3], denominations=beside_after)
    events = run(deriver, scene.frames(10))
    (crossing,) = of(events, "rail_crossing")
    assert (crossing["direction"], crossing["value"], crossing["confidence"]) == ("in", 1000, sure)


@pytest.mark.parametrize(("after", "values_sure", "value", "sure"), [
    # read again with as many chips, its values unsure: the camera's doubt, no chips that came (pocket_chips_01 from
    # the tilted 4K camera, session 59: a box holding 1000s and 25s together, its values 0.0 sure, had 'gained' a 1000)
    ((25,) * 4 + (1000,) * 16, 0.0, 1000, 0.95),
    # read again with as many chips surely: it changed, and the 1000 it gained came with the 500s
    ((25,) * 4 + (1000,) * 16, 0.9, 2000, 0.9),
])
def test_a_stack_read_again_unsure_with_as_many_chips_is_no_chips_that_came(
        deriver: EventDeriver, after: tuple[int, ...], values_sure: float, value: int, sure: float) -> None:
    # Two 500s added under the player's hand on top of seat 4's 500s; beside them, beyond the hand's cover, a box of
    # 5 25s and 15 1000s.
    beside = chips("stack_4", (25,) * 5 + (1000,) * 15, track=3, dx=-110, values_confidence=values_sure)
    scene = Scene(chips={1: chips("stack_4", [500] * 4, track=1), 3: beside})
    run(deriver, scene.frames(5))
    seated(scene, 4, track=54)
    run(deriver, scene.frames(3))
    scene.hands[54] = hand(centre("stack_4", 60), "stack_4", track=54)
    scene.chips[1] = chips("stack_4", [500] * 6, track=1, count_confidence=0.95)
    scene.chips[3] = replace(scene.chips[3], denominations=after)
    events = run(deriver, scene.frames(10))
    (crossing,) = of(events, "rail_crossing")
    assert (crossing["direction"], crossing["value"], crossing["confidence"]) == ("in", value, sure)
    (zone,) = [z for z in of(events, "zone_chips") if z["zone"] == "stack_4"]
    assert zone["value"] == 3000 + sum(after)  # the zone is given as read, the re-read stack too


def test_a_push_carries_how_sure_the_zone_readings_behind_it_were(deriver: EventDeriver) -> None:
    # Seat 1 picks 2 of its 5 chips up and lays them in its bet zone, read at 0.7: the push is as sure as that.
    scene, events = picked_up(deriver, value=100, left=3)
    scene.hands[51] = hand(centre("bet_1"), "bet_1", track=51)
    scene.chips[2] = chips("bet_1", [100, 100], track=2, count_confidence=0.7)
    events += run(deriver, scene.frames(8))
    del scene.hands[51]
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"], push["confidence"]) == (1, 200, "bet_1", 0.7)


def test_a_second_unsure_box_beside_a_bet_does_not_take_its_place(deriver: EventDeriver) -> None:
    """From a fused pair of 4K cameras (pocket_chips_01) the small blind's two 25s, called to 300, got a second box
    of two 25s 15 mm off them, read unsure, listed first: paired in the order read, the bet's own stack became the
    chips that came, as sure as it was read, and a call of 250 read as 300 sure made a false A3. Paired closest
    first, the chips that came are the unsure box's, and the push is no surer than it."""
    scene = Scene(chips={1: chips("stack_1", [100] * 5, track=1), 2: chips("bet_1", [25, 25], track=2)})
    run(deriver, scene.frames(10))
    seated(scene, 1, track=51)
    run(deriver, scene.frames(3))
    scene.hands[51] = hand(centre("stack_1"), "stack_1", track=51)
    scene.chips[1] = chips("stack_1", [100] * 3, track=1)
    run(deriver, scene.frames(8))
    scene.hands[51] = hand(centre("bet_1", 40), "bet_1", track=51)
    scene.chips[3] = chips("bet_1", [100, 100], track=3, dx=40)
    events = run(deriver, scene.frames(8))
    del scene.hands[51]
    ghost = chips("bet_1", [25, 25], track=4, dx=-15, count_confidence=0.6, values_confidence=0.4)
    scene.chips = {4: ghost, **scene.chips}  # the second box read first
    events += run(deriver, scene.frames(30))
    pushes = [(p["seat"], p["value"], p["confidence"]) for p in of(events, "chips_pushed")]
    assert pushes == [(1, 250, 0.4)]


@pytest.mark.parametrize(("landed", "sure", "pushed"), [([5000] * 11, 0.13, []), ([5000] * 11, 1.0, [55000]),
                                                        ([100, 100], 0.13, [200])])
def test_chips_read_unsure_worth_more_than_the_stack_ever_held_are_no_push(deriver: EventDeriver, landed: list[int],
                                                                           sure: float, pushed: list[int]) -> None:
    """Seat 1's stack was never read holding more than 500: eleven 5000s read in its bet zone at 0.13 as its hand
    lands chips there are the bet zone misread (from a tilted 4K camera, a hole card's corner boxed as chips: a push
    of 55,000 whose doubt left the hand's string bet unflagged), not a push; read surely, or worth no more than the
    stack, they are one."""
    scene, events = picked_up(deriver, value=100, left=3)
    scene.hands[51] = hand(centre("bet_1"), "bet_1", track=51)
    scene.chips[2] = chips("bet_1", landed, track=2, count_confidence=sure)
    events += run(deriver, scene.frames(8))
    del scene.hands[51]
    events += run(deriver, scene.frames(20))
    assert [z["value"] for z in of(events, "zone_chips") if z["zone"] == "bet_1"] == [sum(landed)]
    assert [p["value"] for p in of(events, "chips_pushed")] == pushed


@pytest.mark.parametrize(("reached", "landed", "sure"), [("bet_1", "bet_1", 1.0), ("pot", "pot", 1.0),
                                                         ("bet_1", "pot", 0.3)])
def test_a_push_is_as_sure_as_its_landing_a_splash_as_its_pick_up_too(deriver: EventDeriver, reached: str,
                                                                       landed: str, sure: float) -> None:
    # Seat 1's stack is read unsure (0.3) and the chips it lifts land read sure: laid in its bet zone, or laid in
    # the pot by its own hand, the landing's reading is the push's amount; tossed into the pot from its bet line,
    # they are the seat's only through its pick-up (session 12, splash_01 from a tilted 4K camera: the seat's stacks
    # read at 0.03-0.4 before and after the splash, the 500 laid in the pot read at 0.92).
    scene, events = picked_up(deriver, value=100, left=3, sure=0.3)
    scene.hands[51] = hand(centre(reached), reached, track=51)
    scene.chips[2] = chips(landed, [100, 100], track=2)
    events += run(deriver, scene.frames(8))
    del scene.hands[51]
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"], push["confidence"]) == (1, 200, landed, sure)


def a_hand_reaches_the_pot(deriver: EventDeriver, scene: Scene, *, comes_from: str) -> list[EventBase]:
    """A hand comes over a seat's rail (`seat_<s>`; seat 1's is track 51, another's 59, seat 1's own hand then
    resting by its stack) or from a zone (track 59 first seen there), reaches the pot and goes back where it came
    from: what it lays there is for the caller to add."""
    track = 51 if comes_from == "seat_1" else 59
    start = hand(centre(comes_from), comes_from, track=track) if not comes_from.startswith("seat_") else \
        hand(LAYOUT.seat(int(comes_from[-1])).position, "rail_edge", track=track)
    events: list[EventBase] = []
    if track != 51:
        scene.hands[51] = hand(centre("stack_1", 0, 60), "stack_1", track=51)
        scene.hands[track] = start
        events += run(deriver, scene.frames(3))
    scene.hands[track] = hand(centre("pot"), "pot", track=track)
    events += run(deriver, scene.frames(4))
    scene.hands[track] = start
    return events


@pytest.mark.parametrize(("comes_from", "seat", "sure"), [("seat_1", 1, 1.0), ("seat_9", 9, 1.0), ("bet_1", 1, 0.3)])
def test_chips_a_hand_lays_in_the_pot_are_the_seat_of_that_hand(deriver: EventDeriver, comes_from: str, seat: int,
                                                                  sure: float) -> None:
    # Seat 1 lifts chips from a stack read unsure (0.3). A hand lays two 100s in the pot, hiding them, and lifts
    # (they are first seen once it is back where it came from): laid by seat 1's own hand, come over its rail, the
    # splash is as sure as the pot's reading. Laid by seat 9's own hand, they are seat 9's, as sure (chips move only
    # in a hand: seat 1's never reached the pot; until session 48 they were seat 1's through its pick-up, and from
    # a tilted 1280x720 camera a splash went to a seat whose stack was misread a pick-up). Laid by a hand first
    # seen out on the table in seat 1's bet zone (a track lost and found again, of no sure seat: string_bet_02
    # from video, the dealer's gathering hand taken for seat 3's), seat 1's chips are in the pot only through its
    # unsure pick-up.
    scene, events = picked_up(deriver, value=100, left=3, sure=0.3)
    events += a_hand_reaches_the_pot(deriver, scene, comes_from=comes_from)
    scene.chips[2] = chips("pot", [100, 100], track=2)
    events += run(deriver, scene.frames(8))
    scene.hands.clear()
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"], push["confidence"]) == (seat, 200, "pot", sure)


def seat_1_lifts_a_500(deriver: EventDeriver, scene: Scene) -> list[EventBase]:
    """Seat 1 (hand track 51) comes over its rail and lifts one of the five 500s of stack_1 (track 1)."""
    run(deriver, scene.frames(5))
    seated(scene, 1, track=51)
    run(deriver, scene.frames(3))
    scene.hands[51] = hand(centre("stack_1"), "stack_1", track=51)
    scene.chips[1] = chips("stack_1", [500] * 4, track=1)
    return run(deriver, scene.frames(8))


@pytest.mark.parametrize("lift_seen", [True, False])
def test_a_splash_is_the_seat_whose_hand_laid_it_not_the_last_to_pick_up(deriver: EventDeriver,
                                                                         lift_seen: bool) -> None:
    # Seat 1 lifts a 500 (seen, or its stack's reading does not show it: read unsure, or hidden); then seat 9's
    # stack is read a chip short under its hand (a pick-up too, the later one), and that hand never reaches the
    # pot; seat 1's own hand lays the 500 in the pot. The splash is seat 1's (from video the latest pick-up alone
    # gave splash_02's splash, and splash_01's with the re-quantised detector, to another seat; with seat 1's lift
    # unseen, tilted 1280x720 splash_01 until session 48: seat 5's bet after it then came out of turn).
    scene = Scene(chips={1: chips("stack_1", [500] * 5, track=1), 8: chips("stack_9", [100] * 5, track=8)})
    events = seat_1_lifts_a_500(deriver, scene) if lift_seen else run(deriver, scene.frames(5))
    seated(scene, 9, track=59)
    events += run(deriver, scene.frames(3))
    scene.hands[59] = hand(centre("stack_9"), "stack_9", track=59)
    scene.chips[8] = chips("stack_9", [100] * 4, track=8)
    events += run(deriver, scene.frames(8))
    del scene.hands[59]
    if not lift_seen:
        seated(scene, 1, track=51)
        events += run(deriver, scene.frames(3))
        scene.hands[51] = hand(centre("stack_1"), "stack_1", track=51)
        events += run(deriver, scene.frames(6))
    scene.hands[51] = hand(centre("pot"), "pot", track=51)
    events += run(deriver, scene.frames(4))
    seated(scene, 1, track=51)
    scene.chips[9] = chips("pot", [500], track=9)
    events += run(deriver, scene.frames(8))
    scene.hands.clear()
    events += run(deriver, scene.frames(20))
    assert [(p["seat"], p["value"], p["landed_zone"]) for p in of(events, "chips_pushed")] == [(1, 500, "pot")]


@pytest.mark.parametrize(("aside", "sure"), [(42.0, 1.0), (100.0, 0.45)])
def test_a_pot_stack_pushed_aside_by_a_splash_changes_nothing(deriver: EventDeriver, aside: float,
                                                               sure: float) -> None:
    # The pot holds 6 x 100 read unsure (0.45). Seat 1 lays a 500 where they lay and they are pushed a chip's width
    # aside, read the same (splash_01 from a tilted 4K camera): the splash is as sure as the 500's reading. A stack
    # of the same chips appearing farther off may be other chips: the change is as unsure as their readings. That
    # chips came to rest in the pot is as sure as the 500's count either way (the 100s hold none of the chips come).
    scene = Scene(chips={1: chips("stack_1", [500] * 5, track=1), 9: chips("pot", [100] * 6, track=9,
                                                                             count_confidence=0.45)})
    events = seat_1_lifts_a_500(deriver, scene)
    scene.hands[51] = hand(centre("pot"), "pot", track=51)
    events += run(deriver, scene.frames(4))
    seated(scene, 1, track=51)
    scene.chips[9] = chips("pot", [500], track=9)
    scene.chips[10] = chips("pot", [100] * 6, track=10, dx=aside, count_confidence=0.45)
    events += run(deriver, scene.frames(8))
    del scene.hands[51]
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"], push["confidence"]) == (1, 500, "pot", sure)
    assert push["landed_confidence"] == 1.0


@pytest.mark.parametrize(("laid_by", "seat", "landed"), [("seat_1", 1, 0.9), ("bet_1", 1, 0.3)])
def test_chips_splashed_counted_sure_and_valued_unsure_landed_sure(deriver: EventDeriver, laid_by: str, seat: int,
                                                                   landed: float) -> None:
    # Seat 1's own hand lays a 500 and three 100s in the pot (splash_02 from a tilted 4K camera): the 100s' count is
    # read 0.9 sure, their values 0.5 (the chips under the top, their sides too thin to read). The push's amount is
    # unsure, its landing sure (what a splash rests on). Laid by a hand of no sure seat (first seen out on the
    # table), the chips are seat 1's only through its pick-up, read 0.3 sure: so is their landing.
    scene, events = picked_up(deriver, value=100, left=3, sure=0.3)
    events += a_hand_reaches_the_pot(deriver, scene, comes_from=laid_by)
    scene.chips[2] = chips("pot", [500], track=2)
    scene.chips[3] = chips("pot", [100] * 3, track=3, dx=42.0, count_confidence=0.9, values_confidence=0.5)
    events += run(deriver, scene.frames(8))
    scene.hands.clear()
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"]) == (seat, 800, "pot")
    assert (push["confidence"], push["landed_confidence"]) == (min(0.5, landed), landed)


@pytest.mark.parametrize(("pot_sure", "laid_dx", "pushes"), [(0.07, 0.0, [(1, 500, "pot")]),
                                                            (0.07, 90.0, [(1, 500, "pot")]), (0.9, 0.0, [])])
def test_a_splash_beside_pot_chips_read_again_unsure_is_the_chips_laid(deriver: EventDeriver, pot_sure: float,
                                                                       laid_dx: float, pushes: list[object]) -> None:
    # The pot's six 100s are read as eight (0.07 sure) while the dealer's hand passes over them; seat 1's hand then
    # splashes a 500 where they lay (or beside them), its stack's shrink unread, pushing them aside, and they are
    # read as one, as unsure (splash_01 from 1280x720): a pot that shrank by 200 had made no splash, and the next
    # players' actions were out of turn. The new stack came; the others' new count is the camera's doubt. Read sure
    # each time, the 100s went: the camera contradicts itself, and no push is made of it.
    scene = Scene(chips={1: chips("stack_1", [500] * 5, track=1, count_confidence=0.1),
                         9: chips("pot", [100] * 6, track=9, count_confidence=pot_sure)})
    run(deriver, scene.frames(5))
    scene.hands[60] = hand(centre("pot"), "pot", track=60)
    scene.chips[9] = chips("pot", [100] * 8, track=9, count_confidence=pot_sure)
    run(deriver, scene.frames(8))
    del scene.hands[60]
    seated(scene, 1, track=51)
    events = run(deriver, scene.frames(10))
    events += a_hand_reaches_the_pot(deriver, scene, comes_from="seat_1")
    scene.chips[10] = chips("pot", [500], track=10, dx=laid_dx)
    scene.chips[9] = chips("pot", [100], track=9, dx=42.0, count_confidence=pot_sure)
    events += run(deriver, scene.frames(8))
    scene.hands.clear()
    events += run(deriver, scene.frames(20))
    assert [(p["seat"], p["value"], p["landed_zone"]) for p in of(events, "chips_pushed")] == pushes

@pytest.mark.parametrize(("lying", "landed"), [(100, 0.98), (500, 0.07)])
def test_a_new_top_in_the_pot_landed_as_sure_as_its_value(deriver: EventDeriver, lying: int, landed: float) -> None:
    # Seat 1 lifts a 500 and its own hand lays it in the pot beside three chips; its count is read 0.07 sure (one
    # chip or three, from 1280x720), its value 0.98 (splash_01): the splash had never been sure enough to flag. A
    # top showing a value no stack there showed is chips come to rest, however many: the landing is as sure as that
    # value. Beside a stack of 500s, the new 500 may be that stack read again: only its count tells.
    scene = Scene(chips={1: chips("stack_1", [500] * 5, track=1), 9: chips("pot", [lying] * 3, track=9)})
    events = seat_1_lifts_a_500(deriver, scene)
    scene.hands[51] = hand(centre("pot"), "pot", track=51)
    events += run(deriver, scene.frames(4))
    seated(scene, 1, track=51)
    scene.chips[10] = chips("pot", [500], track=10, dx=45.0, count_confidence=0.07, values_confidence=0.98)
    events += run(deriver, scene.frames(8))
    del scene.hands[51]
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"]) == (1, 500, "pot")
    assert (push["confidence"], push["landed_confidence"]) == (0.07, landed)


def test_a_pick_up_is_as_sure_as_the_stack_it_came_from_not_its_neighbours(deriver: EventDeriver) -> None:
    # Seat 1 keeps two stacks: 5 x 100 read unsure (0.3) and 5 x 500 read sure. Two 500s thrown into the pot are
    # the seat's through the pick-up from the sure stack: the unsure one, read the same where it lay, moved nothing.
    scene = Scene(chips={1: chips("stack_1", [100] * 5, track=1, count_confidence=0.3),
                         2: chips("stack_1", [500] * 5, track=2, dx=45)})
    run(deriver, scene.frames(5))
    seated(scene, 1, track=51)
    run(deriver, scene.frames(3))
    scene.hands[51] = hand(centre("stack_1", 45), "stack_1", track=51)
    scene.chips[2] = chips("stack_1", [500] * 3, track=2, dx=45)
    events = run(deriver, scene.frames(8))
    scene.hands[51] = hand(centre("pot"), "pot", track=51)
    scene.chips[3] = chips("pot", [500, 500], track=3)
    events += run(deriver, scene.frames(8))
    del scene.hands[51]
    events += run(deriver, scene.frames(20))
    (push,) = of(events, "chips_pushed")
    assert (push["seat"], push["value"], push["landed_zone"], push["confidence"]) == (1, 1000, "pot", 1.0)


def test_the_dealer_resting_on_the_stub_shuffles_once_per_hand(deriver: EventDeriver) -> None:
    scene = Scene(cards={1: card("deck", track=1, count=52, at=centre("deck"))})
    scene.hands[60] = hand(LAYOUT.dealer_position, "rail_edge", track=60)
    run(deriver, scene.frames(2))
    scene.hands[60] = hand(centre("deck", 0, -20), "deck", track=60)
    events = run(deriver, scene.frames(45))
    assert kinds(events).count("shuffle") == 1
    del scene.hands[60]
    run(deriver, scene.frames(20))
    scene.hands[61] = hand(LAYOUT.dealer_position, "rail_edge", track=61)
    run(deriver, scene.frames(2))
    scene.hands[61] = hand(centre("deck", 0, -20), "deck", track=61)
    assert "shuffle" not in kinds(run(deriver, scene.frames(45)))


def hand_on_cards(deriver: EventDeriver, scene: Scene) -> Scene:
    """Seat 2 (hand track 52) comes over the rail to its hole zone and lays its hand on the scene's cards there."""
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    run(deriver, scene.frames(3))
    scene.hands[52] = hand(centre("hole_2", 0, 10), "hole_2", track=52)
    return scene


def resting_on_cards(deriver: EventDeriver, *, frames: int = 15,
                     dealt: bool = True) -> tuple[Scene, list[EventBase]]:
    """Seat 2's hand rests on its one hole card (`dealt`; else where it will lie) for `frames` (half a second)."""
    scene = hand_on_cards(deriver, Scene(cards={1: card("hole_2", track=1, at=centre("hole_2"))} if dealt else {}))
    return scene, run(deriver, scene.frames(frames))


def test_a_tap_is_a_hand_resting_on_its_own_cards_with_nothing_changed(deriver: EventDeriver) -> None:
    scene, events = resting_on_cards(deriver)
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert [(e["seat"]) for e in of(events, "tap")] == [2]


def test_a_tap_is_published_once_the_hand_is_back_over_its_rail_though_a_box_stays_there(
        deriver: EventDeriver) -> None:
    """From video the gated detector's last box of a hand leaving by the frame's edge stayed there a second, and the
    tap came with its end, 1.7-1.9 s after the tap itself (fresh1080): a hand back over its rail `lost_s` has left."""
    scene, events = resting_on_cards(deriver)
    scene.hands[52] = hand(LAYOUT.seat(2).position, "rail_edge", track=52)
    events += run(deriver, scene.frames(int(0.5 * FPS)))
    assert [e["seat"] for e in of(events, "tap")] == [2]
    events += run(deriver, scene.frames(30))
    del scene.hands[52]
    assert [e["seat"] for e in of(events + run(deriver, scene.frames(20)), "tap")] == [2]


def test_a_box_seen_on_the_cards_a_moment_then_lost_did_not_tap(deriver: EventDeriver) -> None:
    """From video a stray box (a second one on a pushing hand) lay on seat 6's cards for 0.1 s and went unseen: its
    track ended `lost_s` later, and that time, counted as a visit, made a tap (out_of_turn_04)."""
    scene, events = resting_on_cards(deriver, frames=4)
    del scene.hands[52]
    events += run(deriver, scene.frames(30))
    assert of(events, "tap") == []


def test_a_hand_resting_where_no_card_was_dealt_yet_did_not_tap(deriver: EventDeriver) -> None:
    """Before the deal a player's hand rests where its hole cards will be: no cards, nothing checked (from video such
    a tap made the flop of burnless_board_02 a rabbit hunt)."""
    scene, events = resting_on_cards(deriver, dealt=False)
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert of(events, "tap") == []


def covered_card_moves(deriver: EventDeriver, scene: Scene) -> list[EventBase]:
    """The covered card of hole_2 (track 2) moves for 12 frames (not at rest, so not in the zone), then rests."""
    events: list[EventBase] = []
    for step in range(12):
        scene.cards[2] = card("hole_2", track=2, at=centre("hole_2", 20 + 15 * (step % 2), 15 * (step % 2)))
        events += run(deriver, scene.frames(1))
    scene.cards[2] = card("hole_2", track=2, at=centre("hole_2", 20))
    return events + run(deriver, scene.frames(8))


def test_a_tap_that_hides_the_cards_for_a_moment_is_still_a_tap(deriver: EventDeriver) -> None:
    """From video the resting hand hides part of a hole card, whose box then slides about (the zone reads one card
    for a moment), and the hand is seen as two boxes at once: the zone holds what it held when the hand came, so
    the seat tapped, once."""
    scene = Scene(cards={1: card("hole_2", track=1, at=centre("hole_2", -20)),
                         2: card("hole_2", track=2, at=centre("hole_2", 20))})
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    scene.hands[53] = hand(LAYOUT.seat(2).position, "rail_edge", track=53)
    run(deriver, scene.frames(3))
    scene.hands[52] = hand(centre("hole_2", 0, 10), "hole_2", track=52)
    scene.hands[53] = hand(centre("hole_2", 0, 30), "hole_2", track=53)
    events = run(deriver, scene.frames(8))
    events += covered_card_moves(deriver, scene)
    del scene.hands[52], scene.hands[53]
    events += run(deriver, scene.frames(20))
    assert [z["face_down"] for z in of(events, "zone_cards")] == [1, 2]
    assert [e["seat"] for e in of(events, "tap")] == [2]


def resting_on_two_cards(deriver: EventDeriver) -> Scene:
    """Seat 2's hand laid on its two hole cards (tracks 1, 2)."""
    return hand_on_cards(deriver, Scene(cards={1: card("hole_2", track=1, at=centre("hole_2", -20)),
                                               2: card("hole_2", track=2, at=centre("hole_2", 20))}))


def test_a_tap_whose_hand_left_a_third_card_back_read_in_the_zone_is_still_a_tap(deriver: EventDeriver) -> None:
    """From video a finger resting on two hole cards was read as a third card back, and the zone was still read so
    after the hand left (burnless_board_02, seat 7): no card was dealt to the seat, so it holds what it held."""
    scene = resting_on_two_cards(deriver)
    scene.cards[3] = card("hole_2", track=3, at=centre("hole_2", 0, 25))
    events = run(deriver, scene.frames(15))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert [z["face_down"] for z in of(events, "zone_cards")] == [3]
    assert [e["seat"] for e in of(events, "tap")] == [2]


def test_a_fold_seen_in_stages_is_no_tap(deriver: EventDeriver) -> None:
    """The hand rests on its two cards and takes one up; the zone reads one card as the hand leaves and none a moment
    later (hidden_chips_removed_01 from video, seat 6's fold): cards were taken, no tap."""
    scene = resting_on_two_cards(deriver)
    events = run(deriver, scene.frames(10))
    del scene.cards[2]
    events += run(deriver, scene.frames(6))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    del scene.cards[1]
    events += run(deriver, scene.frames(10))
    assert [z["face_down"] for z in of(events, "zone_cards")] == [1, 0]
    assert of(events, "tap") == []


def test_a_tap_beside_a_stack_read_again_unsure_carries_that_doubt(deriver: EventDeriver) -> None:
    """The hand passing over its stack to reach its cards makes the stack read again, unsure and otherwise: no
    evidence that chips moved, so it is a tap, as sure as that reading."""
    scene = Scene(cards={1: card("hole_2", track=1, at=centre("hole_2"))},
                  chips={5: chips("stack_2", [100] * 10, track=5)})
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    run(deriver, scene.frames(3))
    scene.hands[52] = hand(centre("stack_2"), "stack_2", track=52)
    scene.chips[5] = chips("stack_2", [100] * 13, track=5, count_confidence=0.2)
    events = run(deriver, scene.frames(4))
    scene.hands[52] = hand(centre("hole_2", 0, 10), "hole_2", track=52)
    events += run(deriver, scene.frames(15))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert [z["value"] for z in of(events, "zone_chips")] == [1300]
    assert [(e["seat"], e["confidence"]) for e in of(events, "tap")] == [(2, 0.2)]


def towards_stack(fraction: float) -> tuple[float, float]:
    """A point of seat 2's from its hole zone's centre (0) to its stack zone's (1); the zones' edge lies at ~0.53
    (55 mm out), and 0.8 is 28 mm beyond it."""
    (hx, hy), (sx, sy) = centre("hole_2"), centre("stack_2")
    return hx + (sx - hx) * fraction, hy + (sy - hy) * fraction


@pytest.mark.parametrize(("beyond", "taps"), [(0.8, [2]), (1.0, [])], ids=["beside_the_cards", "on_the_stack"])
def test_a_tap_whose_point_swings_across_the_edge_of_the_stack_zone_is_still_a_tap(
        deriver: EventDeriver, beyond: float, taps: list[int]) -> None:
    """From the tilted 4K camera seat 8 tapped beside its cards by the stack zone's edge (clean_hand_05): the
    vision's point of the hand swung across it (two frames on the cards, one beyond), and each return to the hole
    zone waited three frames to settle, so its rests came to 0.27 and 0.20 s and both taps were lost (three false
    alerts). A hand resting on its stack, farther than `tap_reach_mm` from the cards, did not tap."""
    scene = Scene(cards={1: card("hole_2", track=1, at=centre("hole_2"))})
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    events = run(deriver, scene.frames(3))
    for _ in range(6):
        scene.hands[52] = hand(towards_stack(0.4), "hole_2", track=52)
        events += run(deriver, scene.frames(2))
        scene.hands[52] = hand(towards_stack(beyond), "stack_2", track=52)
        events += run(deriver, scene.frames(1))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert [e["seat"] for e in of(events, "tap")] == taps


def test_a_hand_that_went_on_to_its_bet_zone_did_not_tap(deriver: EventDeriver) -> None:
    """A push the camera did not see land: the hand crossed its cards on the way to the bet zone."""
    scene, events = resting_on_cards(deriver)
    scene.hands[52] = hand(centre("bet_2"), "bet_2", track=52)
    events += run(deriver, scene.frames(6))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert of(events, "tap") == []


def test_a_hand_passing_over_its_cards_did_not_tap(deriver: EventDeriver) -> None:
    """A pushing hand crosses its hole cards on the way from its stack to its bet zone in 0.1-0.2 s; a tap rests there
    0.4 s and more. From a tilted 4K camera a hand carrying chips was lost beyond its cards, short of its bet zone
    (string_bet_01): its 0.2 s over the cards made a tap, and the push that followed an act out of turn."""
    scene = Scene(cards={1: card("hole_2", track=1, at=centre("hole_2"))})
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    run(deriver, scene.frames(3))
    scene.hands[52] = hand(centre("hole_2", 0, 10), "hole_2", track=52)
    events = run(deriver, scene.frames(7))
    hole, bet = centre("hole_2"), centre("bet_2")
    scene.hands[52] = hand(((hole[0] + bet[0]) / 2, (hole[1] + bet[1]) / 2), None, track=52)
    events += run(deriver, scene.frames(3))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert of(events, "tap") == []


def test_a_hand_resting_on_its_cards_while_its_push_lands_did_not_tap(deriver: EventDeriver) -> None:
    """From video the pushing hand is seen as a second track that comes as the first one (resting on the cards) is
    lost, and the chips are read unsure (set aside for a tap): the first track ends while the push's chips are
    landing, before the push is published. That was the push, not a tap."""
    scene, events = resting_on_cards(deriver)
    del scene.hands[52]
    events += run(deriver, scene.frames(4))
    scene.hands[53] = hand(centre("bet_2"), "bet_2", track=53)
    scene.chips[7] = chips("bet_2", [100, 100], track=7, count_confidence=0.5)
    events += run(deriver, scene.frames(4))
    del scene.hands[53]
    events += run(deriver, scene.frames(30))
    assert [(p["seat"], p["value"]) for p in of(events, "chips_pushed")] == [(2, 200)]
    assert of(events, "tap") == []


def test_frames_out_of_time_order_are_refused(deriver: EventDeriver) -> None:
    deriver.update(TableState(frame=5, t=1.0))
    with pytest.raises(ValueError, match="time order"):
        deriver.update(TableState(frame=4, t=0.5))


def test_settle_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="settle_frames"):
        DeriveConfig(settle_frames=0)


def test_a_tap_by_a_card_protector_is_still_a_tap(deriver: EventDeriver) -> None:
    """A chip laid on the hole cards as a protector makes the hole zone a chip zone too: its chips reading is no
    change of its cards (from video the protector's reading came between the cards' readings, and the tap of a
    hand that hid a card for a moment was lost, pocket_chips_02)."""
    scene = Scene(cards={1: card("hole_2", track=1, at=centre("hole_2", -20)),
                         2: card("hole_2", track=2, at=centre("hole_2", 20))})
    run(deriver, scene.frames(5))
    scene.chips[9] = chips("hole_2", [25], track=9, dx=-60)
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    run(deriver, scene.frames(3))
    scene.hands[52] = hand(centre("hole_2", 0, 10), "hole_2", track=52)
    events = run(deriver, scene.frames(8))
    events += covered_card_moves(deriver, scene)
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert [z["face_down"] for z in of(events, "zone_cards")] == [1, 2]
    assert [e["seat"] for e in of(events, "tap")] == [2]


@pytest.mark.parametrize(("before", "taps"), [(0, []), (4, [2])], ids=["laid_by_the_hand", "already_there"])
def test_a_hand_that_lays_a_protector_on_its_cards_did_not_tap(deriver: EventDeriver, before: int,
                                                               taps: list[int]) -> None:
    """From video seat 4 took a chip from its stack and laid it on its cards (clean_hand_02), both readings unsure
    (0.11, 0.22: set aside for a tap), its hand on the cards 0.3 s: a card protector laid, no check. A protector
    already there before the hand came is read again under it, here a chip more (pocket_chips_02's stack of 25s,
    read 4 and 5 chips unsure as hands passed): still a tap."""
    scene = Scene(cards={1: card("hole_2", track=1, at=centre("hole_2", 20))})
    if before:
        scene.chips[9] = chips("hole_2", [25] * before, track=9, dx=-30, count_confidence=0.2, values_confidence=0.2)
    run(deriver, scene.frames(5))
    seated(scene, 2, track=52)
    events = run(deriver, scene.frames(3))
    scene.hands[52] = hand(centre("hole_2", 0, 10), "hole_2", track=52)
    events += run(deriver, scene.frames(6))
    scene.chips[9] = chips("hole_2", [25] * (before + 1), track=9, dx=-30, count_confidence=0.2, values_confidence=0.2)
    events += run(deriver, scene.frames(9))
    del scene.hands[52]
    events += run(deriver, scene.frames(20))
    assert [e["seat"] for e in of(events, "tap")] == taps


def test_a_box_laid_over_two_stacks_is_no_chips_come(deriver: EventDeriver) -> None:
    """From a tilted 4K camera a box without a vision id spanning seat 3's two 100s in its bet zone, read as seven
    chips at 0.13, was taken for chips come with no hand near (a stack where none lay) and made a push of 1150
    (string_bet_02). No stack's box holds the middles of two others: it is one box over both."""
    left = replace(chips("bet_1", [100], track=1, dx=-20), box=(100.0, 100.0, 120.0, 120.0))
    right = replace(chips("bet_1", [100], track=2, dx=20), box=(130.0, 100.0, 150.0, 120.0))
    scene = Scene(chips={1: left, 2: right})
    events = run(deriver, scene.frames(10))
    assert [e["value"] for e in of(events, "zone_chips")] == [200]
    merged = chips("bet_1", [1000] * 7, track=3, count_confidence=0.13)
    scene.chips[3] = replace(merged, box=(98.0, 98.0, 152.0, 122.0))
    events = run(deriver, scene.frames(20))
    assert of(events, "zone_chips") == [] and of(events, "chips_pushed") == []


@pytest.mark.parametrize(("pot_sure", "pushes"), [(0.3, []), (1.0, [(1, 300, "pot")])])
def test_a_gather_read_a_chip_long_unsure_is_no_splash(deriver: EventDeriver, pot_sure: float,
                                                       pushes: list[tuple[int, int, str]]) -> None:
    # Seat 1's stack is read three chips short, unsure (a pick-up at 0.3); the dealer gathers seat 4's bet of 200
    # and the pot is read 300. Read unsure, the pot's extra 100 is a misread of the gather: from a tilted 4K camera
    # such a splash, read at 0, left every betting ruling of the hand unsaid (string_bet_02's string bet). Read
    # sure, the pot's growth beyond the gather is still a splash by the seat that picked chips up.
    scene, events = picked_up(deriver, value=100, left=2, sure=0.3)
    del scene.hands[51]
    scene.chips[2] = chips("bet_4", [100, 100], track=2)
    events += run(deriver, scene.frames(12))
    events += dealer_gathers(deriver, scene, bet_track=2, bet_zone="bet_4",
                             pot=chips("pot", [100, 100, 100], track=3, count_confidence=pot_sure))
    del scene.hands[60]
    events += run(deriver, scene.frames(20))
    assert [(p["seat"], p["value"], p["landed_zone"]) for p in of(events, "chips_pushed")] == pushes


@pytest.mark.parametrize("stray_sure", [0.14, None])
def test_a_gather_that_leaves_an_unsure_stray_reading_in_the_bet_zone_explains_the_pot(
        deriver: EventDeriver, stray_sure: float | None) -> None:
    # Seat 1's stack is read two chips short, unsure (a pick-up at 0.3); the dealer gathers seat 4's two 100s and
    # the pot is read 200 at 0.5. From a tilted 4K camera (string_bet_02) a corner of the seat's hole card stayed
    # boxed in the bet zone as eleven 5000s at 0.14: the bet zone did not shrink, so no gather explained the pot's
    # 200, a splash by seat 1 at 0.47, and the hand's string bet went unflagged. Without the stray reading (None),
    # the gather is a shrink as ever.
    scene, events = picked_up(deriver, value=100, left=3, sure=0.3)
    del scene.hands[51]
    scene.chips[2] = chips("bet_4", [100], track=2, dx=-15.0)
    scene.chips[4] = chips("bet_4", [100], track=4, dx=15.0)
    events += run(deriver, scene.frames(12))
    scene.hands[60] = hand(LAYOUT.dealer_position, "rail_edge", track=60)
    events += run(deriver, scene.frames(2))
    scene.hands[60] = hand(centre("bet_4", 0, -10), "bet_4", track=60)
    events += run(deriver, scene.frames(6))
    del scene.chips[2], scene.chips[4]
    if stray_sure is not None:
        scene.chips[5] = chips("bet_4", [5000] * 11, track=5, dx=30.0, count_confidence=stray_sure,
                               values_confidence=0.28)
    scene.hands[60] = hand(centre("pot", 0, -10), "pot", track=60)
    events += run(deriver, scene.frames(8))
    scene.chips[3] = chips("pot", [100, 100], track=3, count_confidence=0.5)
    events += run(deriver, scene.frames(12))
    del scene.hands[60]
    events += run(deriver, scene.frames(20))
    assert of(events, "chips_pushed") == []


def test_chips_a_players_hand_lays_in_the_pot_with_no_pick_up_seen_are_its_seats(deriver: EventDeriver) -> None:
    # Seat 1's hand comes over its rail and lays a 500 in the pot; its stack's shrink was never read (hidden, or
    # read the same). The splash is seat 1's, as sure as the pot's reading (splash_01 from a tilted 4K camera: the
    # splash went underived, the seat seemed not to have acted and the next seats' pushes were out of turn).
    scene = Scene(chips={1: chips("stack_1", [500] * 5, track=1)})
    events = run(deriver, scene.frames(5))
    seated(scene, 1, track=51)
    events += run(deriver, scene.frames(3))
    scene.hands[51] = hand(centre("pot"), "pot", track=51)
    events += run(deriver, scene.frames(4))
    seated(scene, 1, track=51)
    scene.chips[9] = chips("pot", [500], track=9, count_confidence=0.5)
    events += run(deriver, scene.frames(8))
    scene.hands.clear()
    events += run(deriver, scene.frames(20))
    assert [(p["seat"], p["value"], p["landed_zone"], p["confidence"]) for p in of(events, "chips_pushed")] == \
        [(1, 500, "pot", 0.5)]


def test_a_splash_long_after_a_gather_read_short_is_a_splash_however_unsure(deriver: EventDeriver) -> None:
    # The dealer gathers seat 4's 200 and the pot is read 100 (the rest of the gather stays unexplained); seconds
    # later seat 1's own hand lays a 500 there, the pot read 600 at 0.1: that is a splash, not a misread of the
    # gather (splash_01 at 1280x720, 6 s after the gather).
    scene = Scene(chips={1: chips("stack_1", [500] * 5, track=1), 2: chips("bet_4", [100, 100], track=2)})
    events = run(deriver, scene.frames(10))
    events += dealer_gathers(deriver, scene, bet_track=2, bet_zone="bet_4", pot=chips("pot", [100], track=3))
    del scene.hands[60]
    events += run(deriver, scene.frames(int(3.0 * 30)))
    events += seat_1_lifts_a_500(deriver, scene)
    scene.hands[51] = hand(centre("pot"), "pot", track=51)
    events += run(deriver, scene.frames(4))
    seated(scene, 1, track=51)
    scene.chips[3] = chips("pot", [500, 100], track=3, count_confidence=0.1)
    events += run(deriver, scene.frames(8))
    scene.hands.clear()
    events += run(deriver, scene.frames(20))
    assert [(p["seat"], p["value"], p["landed_zone"]) for p in of(events, "chips_pushed")] == [(1, 500, "pot")]
