"""Event semantics of docs/events.md on small handmade scenarios, and the scenes the engine builds."""

from __future__ import annotations

from pathlib import Path

from floorman.core.events import (
    CardDealt,
    ChipsPushed,
    EventBase,
    HandZone,
    RailCrossing,
    Tap,
    ZoneCards,
    ZoneChips,
)
from floorman.datasets.scenario import FPS, scenario_from_text
from floorman.datasets.timeline import Timeline, compile_timeline

HEAD = """\
name: handmade
duration: 20
seed: 5
seats:
  - {seat: 1, stack: {1000: 2, 500: 2, 100: 10, 25: 4}}
  - {seat: 3, stack: {1000: 2, 500: 2, 100: 10, 25: 4}}
  - {seat: 5, stack: {1000: 2, 500: 2, 100: 10, 25: 4}}
button: 5
timeline:
"""


def play(timeline: str) -> Timeline:
    return compile_timeline(scenario_from_text(HEAD + timeline, source="handmade.yaml", base=Path.cwd()))


def of_type(events: tuple[EventBase, ...], kind: type[EventBase]) -> list[EventBase]:
    return [e for e in events if isinstance(e, kind)]


def describe(events: tuple[EventBase, ...]) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, HandZone):
            out.append(f"hand_zone {e.zone} {e.action} {e.holding}")
        elif isinstance(e, ZoneChips | ZoneCards):
            out.append(f"{e.type} {e.zone}")
        else:
            out.append(e.type)
    return out


def test_two_trip_push_gives_trips_1_and_2_in_the_documented_order() -> None:
    t = play("  - {do: push, seat: 1, chips: {100: 4}, trips: 2, at: 1}\n")
    pushes = [e for e in t.events if isinstance(e, ChipsPushed)]
    assert [(p.trip, p.value, p.landed_zone) for p in pushes] == [(1, 200, "bet_1"), (2, 200, "bet_1")]
    assert all(p.t_start < p.t for p in pushes)
    one_trip = ["hand_zone stack_1 enter nothing", "zone_chips stack_1", "hand_zone stack_1 leave chips",
                "chips_pushed", "zone_chips bet_1", "hand_zone bet_1 leave nothing"]
    after_setup = describe(t.events)[5:]
    assert after_setup == one_trip + one_trip
    bets = [e for e in t.events if isinstance(e, ZoneChips) and e.zone == "bet_1"]
    assert [b.value for b in bets] == [200, 400]
    stacks = [e for e in t.events if isinstance(e, ZoneChips) and e.zone == "stack_1"]
    assert [s.value for s in stacks] == [4100, 3900, 3700]


def test_trip_restarts_when_another_seat_acts() -> None:
    t = play("  - {do: push, seat: 1, amount: 200, at: 1}\n  - {do: tap, seat: 3}\n"
             "  - {do: push, seat: 1, amount: 100}\n  - {do: push, seat: 1, amount: 100}\n")
    assert [e.trip for e in t.events if isinstance(e, ChipsPushed)] == [1, 1, 2]
    assert len(of_type(t.events, Tap)) == 1


def test_pocket_chips_give_a_rail_crossing_in_then_a_bigger_stack() -> None:
    t = play("  - {do: pocket_chips, seat: 3, chips: {500: 2}, at: 1}\n")
    kinds = describe(t.events)[5:]
    assert kinds == ["hand_zone rail_edge enter chips", "rail_crossing", "zone_chips stack_3"]
    crossing = next(e for e in t.events if isinstance(e, RailCrossing))
    assert crossing.direction.value == "in" and crossing.seat == 3 and crossing.value == 1000
    assert t.loaded.layout.zone_name_at(*crossing.position) == "rail_edge"
    stack = [e for e in t.events if isinstance(e, ZoneChips) and e.zone == "stack_3"]
    assert stack[-1].value == stack[0].value + 1000 and stack[-1].t > crossing.t
    assert [(a.rule.value, a.seat) for a in t.expected] == [("D2", 3)]


def test_chips_taken_off_the_table_cross_the_rail_outward() -> None:
    t = play("  - {do: hide_chips, seat: 1, mode: removed, chips: {1000: 1}, at: 1}\n")
    assert describe(t.events)[5:] == ["hand_zone stack_1 enter nothing", "zone_chips stack_1",
                                      "hand_zone stack_1 leave chips", "rail_crossing"]
    crossing = next(e for e in t.events if isinstance(e, RailCrossing))
    assert crossing.direction.value == "out" and crossing.value == 1000
    assert [(a.rule.value, a.seat) for a in t.expected] == [("D3", 1)]


def test_covered_stack_reports_a_lower_visible_fraction_while_covered() -> None:
    t = play("  - {do: hide_chips, seat: 5, mode: covered, fraction: 0.75, hold: 3, at: 1}\n")
    stack = [e for e in t.events if isinstance(e, ZoneChips) and e.zone == "stack_5" and e.frame > 0]
    assert [s.visible_fraction for s in stack] == [0.25, 1.0]
    assert stack[1].frame - stack[0].frame == 3 * FPS
    alert = t.expected[0]
    assert alert.rule.value == "D1" and alert.t_start <= stack[0].t and alert.t_end >= stack[1].t


def test_deal_then_fold_empties_the_hole_zone_into_the_muck() -> None:
    t = play("  - {do: deal, at: 0.5, cards: {1: [AS, KD]}}\n  - {do: fold, seat: 3}\n")
    dealt = of_type(t.events, CardDealt)
    assert [e.seat for e in dealt if isinstance(e, CardDealt)] == [1, 3, 5, 1, 3, 5]
    holes = [e for e in t.events if isinstance(e, ZoneCards) and e.zone == "hole_3"]
    assert [h.face_down for h in holes] == [1, 2, 0]
    muck = [e for e in t.events if isinstance(e, ZoneCards) and e.zone == "muck"]
    assert muck[-1].face_down == 2 and muck[-1].t > holes[-1].t
    fold = [e for e in t.events if isinstance(e, HandZone) and e.zone == "hole_3"]
    assert [(f.action, f.seat) for f in fold] == [("enter", 3)] and fold[0].t <= holes[-1].t
    scene = t.scene_at(t.n_frames - 1)
    assert sorted(str(c.card) for c in scene.cards if abs(c.y - scene.layout.seat(1).position[1]) < 400
                  and c.x < -400)[:2] == ["AS", "KD"]


def test_board_with_burn_and_premature_and_burnless_flags() -> None:
    t = play("  - {do: flop, at: 0.5, cards: [2H, 7C, 9S]}\n  - {do: turn, burn: false, premature: true}\n")
    dealt = [e for e in t.events if isinstance(e, CardDealt)]
    assert [(e.to_zone, e.card) for e in dealt] == [("muck", None), ("board", "2H"), ("board", "7C"),
                                                     ("board", "9S"), ("board", dealt[-1].card)]
    board = [e for e in t.events if isinstance(e, ZoneCards) and e.zone == "board"]
    assert len(board[-1].face_up) == 4
    assert sorted(a.rule.value for a in t.expected) == ["E2", "E4"]


def test_gather_and_award_move_the_bets_to_the_pot_then_the_winner() -> None:
    t = play("  - {do: push, seat: 1, chips: {500: 1}, at: 0.5}\n  - {do: push, seat: 3, chips: {500: 1}}\n"
             "  - {do: gather}\n  - {do: award, seat: 3}\n")
    pot = [e.value for e in t.events if isinstance(e, ZoneChips) and e.zone == "pot"]
    assert pot == [500, 1000, 0]
    final = {e.zone: e.value for e in t.events if isinstance(e, ZoneChips)}
    assert final["bet_1"] == final["bet_3"] == 0
    assert final["stack_3"] == 4100 + 500
    enters = [e for e in t.events if isinstance(e, HandZone) and e.seat is None]
    assert [e.zone for e in enters] == ["bet_1", "bet_3"]


def test_scene_carries_chips_above_the_felt_across_the_bet_line() -> None:
    t = play("  - {do: push, seat: 1, chips: {100: 3}, at: 1, trip_duration: 1.5}\n")
    push = next(e for e in t.events if isinstance(e, ChipsPushed))
    start, end = round(push.t_start * FPS), push.frame
    carried = []
    for frame in range(start, end):
        scene = t.scene_at(frame)
        assert len(scene.hands) == 1
        moving = [c for c in scene.chips if c.id >= 100_000]
        assert len(moving) == 1 and moving[0].z > 0 and moving[0].chips == (100, 100, 100)
        carried.append((moving[0].x, moving[0].y))
    layout = t.loaded.layout
    assert layout.crosses_bet_line(1, carried[0], carried[-1])
    after = t.scene_at(end)
    assert any(c.chips == (100, 100, 100) and c.id < 100_000 for c in after.chips)
    assert not t.scene_at(t.n_frames - 1).hands
    t.scene_at(0).check_ids()


def test_infraction_windows_default_to_the_act_plus_five_seconds() -> None:
    t = play("  - {do: string_bet, seat: 3, chips: {100: 3}, trips: 3, at: 2}\n"
             "  - {do: splash, seat: 1, chips: {100: 1}, expect: [{rule: B1, window: [1, 19], note: custom}]}\n"
             "  - {do: out_of_turn, seat: 5, act: tap, expect: []}\n")
    pushes = [e for e in t.events if isinstance(e, ChipsPushed)]
    assert [(p.seat, p.trip) for p in pushes] == [(3, 1), (3, 2), (3, 3), (1, 1)]
    assert pushes[-1].landed_zone == "pot"
    string, splash = t.expected
    assert (string.rule.value, string.seat, string.t_start) == ("A8", 3, 2.0)
    last_trip_end = 2.0 + 3 * 1.2 + 2 * 0.35
    assert string.t_end == round(last_trip_end + 5.0, 3)
    assert (splash.rule.value, splash.seat, splash.t_start, splash.t_end, splash.note) == ("B1", 1, 1, 19, "custom")


def test_rabbit_hunt_by_a_player_shows_whose_hand_reached_the_stub() -> None:
    hand = ("  - {do: post_blinds, at: 0.5}\n  - {do: deal, after: 0.5}\n  - {do: fold, seat: 5, after: 0.5}\n"
            "  - {do: fold, seat: 1, after: 0.5}\n  - {do: gather, after: 0.5}\n  - {do: award, seat: 3, after: 0.5}\n")
    by_player = play(hand + "  - {do: rabbit_hunt, count: 1, to: deck, seat: 1, by: player, after: 1}\n")
    by_dealer = play(hand + "  - {do: rabbit_hunt, count: 1, to: deck, seat: 1, after: 1}\n")
    reaches = [(e.zone, e.seat, e.action) for e in by_player.events if isinstance(e, HandZone) and e.zone == "deck"]
    assert reaches == [("deck", 1, "enter"), ("deck", 1, "leave")]
    turned = [e for e in by_player.events if isinstance(e, CardDealt) and e.face_up]
    enter, leave = [e for e in by_player.events if isinstance(e, HandZone) and e.zone == "deck"]
    assert len(turned) == 1
    assert enter.seq < turned[0].seq < leave.seq
    assert not [e for e in by_dealer.events if isinstance(e, HandZone) and e.zone == "deck" and e.seat is not None]
