"""Chip-integrity infractions (pocket chips, hidden chips), rabbit hunting, and the look-alikes
(card protector, squaring a bet) that must not raise alerts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from floorman.core.chips import chips_value, count_chips
from floorman.core.events import RailCrossing
from floorman.core.rule_ids import RuleId
from floorman.datasets import scenario as sp
from floorman.datasets.scenario_actions import Handler, hand_event, make_track
from floorman.datasets.scenario_dealer import deal_card
from floorman.datasets.scenario_motion import Carry, HandTrack, Key, frame_of, piles_of
from floorman.datasets.scene import HandPose

if TYPE_CHECKING:
    from floorman.datasets.timeline import Compiler


def _flat(chips: dict[int, int]) -> list[int]:
    return [d for d, n in sorted(chips.items(), reverse=True) for _ in range(n)]


def _rail_event(c: Compiler, track: HandTrack, frame: int, *, direction: str, seat: int, chips: list[int]) -> None:
    x, y, _ = track.palm(frame / 30.0)
    counted = count_chips(chips)
    c.emit(frame, RailCrossing.model_validate({**c.base(frame), "direction": direction, "seat": seat,
                                               "objects": "chips", "chips": counted,
                                               "value": chips_value(counted), "position": (round(x, 1),
                                                                                           round(y, 1))}))


def do_pocket_chips(c: Compiler, action: sp.PocketChips, start: float) -> float:
    seat, stack = action.seat, f"stack_{action.seat}"
    chips = _flat(action.chips)
    far = c.geo.outside(seat, distance=320.0)
    sx, sy = c.geo.slot(stack, len(c.state.piles.get(stack, [])))
    keys = [Key(start, *far, 20), Key(start + 0.7, sx, sy, 40), Key(start + 0.85, sx, sy, 30),
            Key(start + 1.5, *far, 40)]
    f_drop = frame_of(start + 0.85)
    track = make_track(c, seat, keys, carries=(Carry(frame_of(start), f_drop, piles=tuple(piles_of(chips))),))
    f_in = track.first_frame(track.f0, f_drop, inside=True, polygon=c.layout.outline_points)
    hand_event(c, f_in, "rail_edge", seat, "enter", "chips")
    _rail_event(c, track, f_in, direction="in", seat=seat, chips=chips)
    c.add_chips(stack, chips)
    c.commit(f_drop)
    c.emit_zone_chips(f_drop, stack)
    end = start + 1.5
    c.expect(rules=[(RuleId.CHIPS_FROM_OUTSIDE.value, seat)], span=(start, end), action=action,
             note=f"seat {seat} adds {chips_value(count_chips(chips))} in chips from below the table")
    return end


def do_hide_chips(c: Compiler, action: sp.HideChips, start: float) -> float:
    seat, stack = action.seat, f"stack_{action.seat}"
    poly = c.layout.zone(stack).points
    out = c.geo.outside(seat)
    sx, sy = c.geo.centre(stack)
    if action.mode == "covered":
        t_rest, t_lift = start + 0.6, start + 0.6 + action.hold
        keys = [Key(start, *out, 70), Key(t_rest, sx, sy, 75), Key(t_lift, sx + 4.0, sy + 3.0, 75),
                Key(t_lift + 0.6, *out, 70)]
        track = make_track(c, seat, keys, pose=HandPose.FLAT)
        f_rest, f_lift = frame_of(t_rest), frame_of(t_lift)
        hand_event(c, track.first_frame(track.f0, f_rest, inside=True, polygon=poly), stack, seat, "enter")
        c.emit_zone_chips(f_rest, stack, visible=round(1.0 - action.fraction, 3))
        c.emit_zone_chips(f_lift, stack, visible=1.0)
        hand_event(c, track.first_frame(f_lift, track.f1, inside=False, polygon=poly), stack, seat, "leave")
        end = t_lift + 0.6
        c.expect(rules=[(RuleId.HIDDEN_CHIPS.value, seat)], span=(start, end), action=action,
                 note=f"seat {seat} keeps a hand over {round(100 * action.fraction)} % of the stack")
        return end
    assert action.chips is not None
    chips = _flat(action.chips)
    far = c.geo.outside(seat, distance=320.0)
    keys = [Key(start, *out, 70), Key(start + 0.5, sx, sy, 45), Key(start + 0.65, sx, sy, 30),
            Key(start + 1.4, *far, 20)]
    f_pick = frame_of(start + 0.65)
    track = make_track(c, seat, keys, carries=(Carry(f_pick, frame_of(start + 1.4), piles=tuple(piles_of(chips))),))
    hand_event(c, track.first_frame(track.f0, f_pick, inside=True, polygon=poly), stack, seat, "enter")
    c.take_chips(stack, chips, field=".chips")
    c.commit(f_pick)
    c.emit_zone_chips(f_pick, stack)
    f_leave = track.first_frame(f_pick, track.f1, inside=False, polygon=poly)
    hand_event(c, f_leave, stack, seat, "leave", "chips")
    f_out = track.first_frame(f_leave, track.f1, inside=False, polygon=c.layout.outline_points)
    _rail_event(c, track, f_out, direction="out", seat=seat, chips=chips)
    end = start + 1.4
    c.expect(rules=[(RuleId.CHIPS_LEAVING_TABLE.value, seat)], span=(start, end), action=action,
             note=f"seat {seat} takes {chips_value(count_chips(chips))} in chips off the table")
    return end


def do_rabbit_hunt(c: Compiler, action: sp.RabbitHunt, start: float) -> float:
    board = c.state.cards.get("board", [])
    if action.to == "board" and len(board) + action.count > 5:
        raise c.error(f"the board holds {len(board)} cards; {action.count} more do not fit", field=".count")
    if action.to == "deck" and action.count > 2:
        raise c.error(f"at most 2 cards fit beside the stub, got {action.count}", field=".count")
    t = start + 0.4
    for k in range(action.count):
        if action.to == "board":
            spot = c.geo.board_spot(len(c.state.cards.get("board", [])))
        else:
            spot = c.geo.deck_side_spot(k)
        t = deal_card(c, zone=action.to, spot=spot, face_up=True, t=t, duration=0.45) + 0.25
    dx, dy = c.geo.deck_spot()
    owner = action.seat if action.by == "player" else None
    out = c.geo.outside(owner)
    track = make_track(c, owner, [Key(start, *out, 80), Key(start + 0.4, dx + 10, dy - 70, 45),
                                  Key(t, dx + 30, dy - 40, 40), Key(t + 0.5, *out, 80)], pose=HandPose.CUPPED)
    if owner is not None:
        deck = c.layout.zone("deck").points
        f_in = track.first_frame(frame_of(start), frame_of(t), inside=True, polygon=deck)
        hand_event(c, f_in, "deck", owner, "enter")
        hand_event(c, track.first_frame(f_in, frame_of(t + 0.5), inside=False, polygon=deck), "deck", owner, "leave")
    c.expect(rules=[(RuleId.RABBIT_HUNTING.value, action.seat)], span=(start, t), action=action,
             note=f"{action.count} card(s) turned from the stub after the hand ended")
    return t + 0.5


def do_protect(c: Compiler, action: sp.Protect, start: float) -> float:
    seat, stack, hole = action.seat, f"stack_{action.seat}", f"hole_{action.seat}"
    out = c.geo.outside(seat)
    sx, sy = c.geo.centre(stack)
    hx, hy = c.geo.centre(hole)
    src, dst = ((hole, stack) if action.remove else (stack, hole))
    (ax, ay), (bx, by) = ((hx, hy), (sx, sy)) if action.remove else ((sx, sy), (hx, hy))
    keys = [Key(start, *out, 70), Key(start + 0.45, ax, ay, 35), Key(start + 0.55, ax, ay, 25),
            Key(start + 0.95, bx, by, 25), Key(start + 1.5, *out, 70)]
    f_pick, f_drop = frame_of(start + 0.55), frame_of(start + 0.95)
    track = make_track(c, seat, keys, carries=(Carry(f_pick, f_drop, piles=((action.chip,),)),))
    poly = c.layout.zone(src).points
    hand_event(c, track.first_frame(track.f0, f_pick, inside=True, polygon=poly), src, seat, "enter")
    c.take_chips(src, [action.chip], field=".chip")
    c.commit(f_pick)
    c.emit_zone_chips(f_pick, src)
    hand_event(c, track.first_frame(f_pick, f_drop, inside=False, polygon=poly), src, seat, "leave", "chips")
    c.add_chips(dst, [action.chip])
    c.commit(f_drop)
    c.emit_zone_chips(f_drop, dst)
    c.expect(rules=[], span=(start, start + 1.5), action=action, note="card protector")
    return start + 1.5


def do_square(c: Compiler, action: sp.Square, start: float) -> float:
    seat, zone = action.seat, f"bet_{action.seat}"
    out = c.geo.outside(seat)
    bx, by = c.geo.centre(zone)
    keys = [Key(start, *out, 70), Key(start + 0.5, bx, by, 30)]
    loops = np.linspace(0.0, 1.0, 7)[1:]
    body = action.duration - 1.0
    keys += [Key(start + 0.5 + body * u, bx + 18 * math.cos(6 * math.pi * u), by + 18 * math.sin(6 * math.pi * u),
                 28) for u in loops]
    keys.append(Key(start + action.duration, *out, 70))
    track = make_track(c, seat, keys)
    poly = c.layout.zone(zone).points
    f_in = track.first_frame(track.f0, track.f1, inside=True, polygon=poly)
    hand_event(c, f_in, zone, seat, "enter")
    hand_event(c, track.first_frame(f_in, track.f1, inside=False, polygon=poly), zone, seat, "leave")
    c.expect(rules=[], span=(start, start + action.duration), action=action, note="squaring a bet")
    return start + action.duration


INFRACTION_HANDLERS: dict[type[sp.ActionBase], Handler] = {
    sp.PocketChips: do_pocket_chips, sp.HideChips: do_hide_chips, sp.RabbitHunt: do_rabbit_hunt,
    sp.Protect: do_protect, sp.Square: do_square,
}
