"""How each timeline action moves hands, chips and cards, and which events it emits (docs/events.md).

Every `do_*` function takes the compiler, the action and its start time, records motions, state snapshots,
events and expected alerts, and returns the time the action ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from floorman.core.chips import chips_value, count_chips
from floorman.core.events import ChipsPushed, Declaration, HandZone
from floorman.core.events import Tap as TapEvent
from floorman.core.rule_ids import RuleId
from floorman.datasets import scenario as sp
from floorman.datasets.scenario import FPS
from floorman.datasets.scenario_motion import CardSlide, Carry, HandTrack, Key, card_object, frame_of, piles_of
from floorman.datasets.scene import HandPose

if TYPE_CHECKING:
    from floorman.datasets.timeline import Compiler

DEALER_SLEEVE = (22, 22, 26)
SKINS = ((224, 172, 140), (198, 140, 105), (141, 97, 66), (236, 190, 160), (170, 120, 90))
SLEEVES = ((40, 50, 90), (120, 30, 35), (60, 60, 60), (30, 80, 60), (150, 130, 100), (90, 60, 120))
CARD_SLIDE_S = 0.3


def _flat(chips: dict[int, int]) -> list[int]:
    return [d for d, n in sorted(chips.items(), reverse=True) for _ in range(n)]


def make_track(c: Compiler, seat: int | None, keys: list[Key], *, carries: tuple[Carry, ...] = (),
           pose: HandPose = HandPose.FLAT) -> HandTrack:
    palette = 0 if seat is None else seat
    track = HandTrack(id=c.next_hand_id(), seat=seat, shoulder=c.geo.outside(seat, distance=520.0),
                      keys=tuple(keys), pose=pose, carries=carries,
                      sleeve_rgb=DEALER_SLEEVE if seat is None else SLEEVES[palette % len(SLEEVES)],
                      skin_rgb=SKINS[palette % len(SKINS)])
    c.tracks.append(track)
    return track


def hand_event(c: Compiler, frame: int, zone: str, seat: int | None, action: str, holding: str = "nothing") -> None:
    c.emit(frame, HandZone.model_validate({**c.base(frame), "zone": zone, "seat": seat, "action": action,
                                           "holding": holding}))


# --- pushes ---------------------------------------------------------------------------------------------


def _push_trip(c: Compiler, seat: int, chips: list[int], *, t0: float, duration: float, splash: bool) -> float:
    stack = f"stack_{seat}"
    land = "pot" if splash else f"bet_{seat}"
    out = c.geo.outside(seat)
    sx, sy = c.geo.centre(stack)
    lx, ly = c.geo.slot(land, len(c.state.piles.get(land, [])))
    h = len(chips) * 3.4
    d = duration
    keys = [Key(t0, *out, 70), Key(t0 + 0.3 * d, sx, sy, 45 + h), Key(t0 + 0.4 * d, sx, sy, 28 + h),
            Key(t0 + 0.72 * d, lx, ly, 24 + h), Key(t0 + 0.8 * d, lx, ly, 45 + h), Key(t0 + d, *out, 70)]
    f_pick, f_land = frame_of(keys[2].t), frame_of(keys[3].t)
    track = make_track(c, seat, keys, carries=(Carry(f_pick, f_land, piles=tuple(piles_of(chips))),))
    stack_poly = c.layout.zone(stack).points
    hand_event(c, track.first_frame(track.f0, f_pick, inside=True, polygon=stack_poly), stack, seat, "enter")
    c.take_chips(stack, chips, field=".chips")
    c.commit(f_pick)
    c.emit_zone_chips(f_pick, stack)
    f_leave = track.first_frame(f_pick, f_land, inside=False, polygon=stack_poly)
    hand_event(c, f_leave, stack, seat, "leave", "chips")
    c.add_chips(land, chips)
    c.commit(f_land)
    c.trip_count += 1
    counted = count_chips(chips)
    c.emit(f_land, ChipsPushed.model_validate({**c.base(f_land), "seat": seat, "trip": c.trip_count,
                                               "chips": counted, "value": chips_value(counted),
                                               "t_start": f_leave / FPS, "landed_zone": land}))
    c.emit_zone_chips(f_land, land)
    f_out = track.first_frame(f_land, track.f1, inside=False, polygon=c.layout.zone(land).points)
    hand_event(c, f_out, land, seat, "leave")
    return t0 + d


def _push(c: Compiler, action: sp.PushFields | sp.OutOfTurn, start: float, *, trips: int, trip_duration: float,
          gap: float, splash: bool) -> float:
    seat = action.seat
    if action.chips is not None:
        chips = _flat(action.chips)
    else:
        assert action.amount is not None
        chips = c.pick_amount(f"stack_{seat}", action.amount, field=".amount")
    if len(chips) < trips:
        raise c.error(f"{trips} trips need at least {trips} chips, got {len(chips)}", field=".trips")
    c.action_started(seat)
    t = start
    for k in range(trips):
        part = chips[k::trips]
        t = _push_trip(c, seat, part, t0=t, duration=trip_duration, splash=splash) + (gap if k < trips - 1 else 0)
    return t


def do_push(c: Compiler, action: sp.Push, start: float) -> float:
    end = _push(c, action, start, trips=action.trips, trip_duration=action.trip_duration, gap=action.gap,
                splash=action.splash)
    c.expect(rules=[], span=(start, end), action=action, note="push")
    return end


def do_string_bet(c: Compiler, action: sp.StringBet, start: float) -> float:
    end = _push(c, action, start, trips=action.trips, trip_duration=action.trip_duration, gap=action.gap,
                splash=action.splash)
    c.expect(rules=[(RuleId.STRING_BET.value, action.seat)], span=(start, end), action=action,
             note=f"seat {action.seat} pushes in {action.trips} trips without declaring a raise")
    return end


def do_splash(c: Compiler, action: sp.Splash, start: float) -> float:
    end = _push(c, action, start, trips=action.trips, trip_duration=action.trip_duration, gap=action.gap,
                splash=True)
    c.expect(rules=[(RuleId.SPLASHING_POT.value, action.seat)], span=(start, end), action=action,
             note=f"seat {action.seat} throws the bet into the pot")
    return end


def do_post_blinds(c: Compiler, action: sp.PostBlinds, start: float) -> float:
    seats = list(c.spec.seat_numbers)
    b = seats.index(c.state.button_seat)
    if len(seats) == 2:
        sb, bb = seats[b], seats[(b + 1) % 2]
    else:
        sb, bb = seats[(b + 1) % len(seats)], seats[(b + 2) % len(seats)]
    level = c.spec.level
    t = start
    for seat, amount in ((sb, level.small_blind), (bb, level.big_blind + level.ante)):
        if amount <= 0:
            continue
        chips = c.pick_amount(f"stack_{seat}", amount, field="")
        c.action_started(seat)
        t = _push_trip(c, seat, chips, t0=t, duration=1.1, splash=False) + 0.3
    c.expect(rules=[], span=(start, t), action=action, note="blinds")
    return t


# --- player gestures ------------------------------------------------------------------------------------


def _tap(c: Compiler, seat: int, count: int, start: float) -> float:
    out = c.geo.outside(seat)
    tx, ty = c.geo.tap_spot(seat)
    keys = [Key(start, *out, 70), Key(start + 0.4, tx, ty, 40)]
    t = start + 0.4
    for _ in range(count):
        keys += [Key(t + 0.09, tx, ty, 8), Key(t + 0.18, tx, ty, 40)]
        t += 0.18
    keys.append(Key(t + 0.45, *out, 70))
    make_track(c, seat, keys)
    c.action_started(seat)
    frame = frame_of(t - 0.09)
    c.emit(frame, TapEvent.model_validate({**c.base(frame), "seat": seat, "count": count}))
    return t + 0.45


def do_tap(c: Compiler, action: sp.Tap, start: float) -> float:
    end = _tap(c, action.seat, action.count, start)
    c.expect(rules=[], span=(start, end), action=action, note="check")
    return end


def _fold(c: Compiler, seat: int, start: float) -> float:
    hole = f"hole_{seat}"
    cards = c.state.cards.get(hole, [])
    if not cards:
        raise c.error(f"seat {seat} has no cards to fold")
    out = c.geo.outside(seat)
    hx, hy = c.geo.centre(hole)
    keys = [Key(start, *out, 70), Key(start + 0.45, hx, hy, 30), Key(start + 0.6, hx, hy, 25),
            Key(start + 1.2, *out, 70)]
    track = make_track(c, seat, keys)
    c.action_started(seat)
    f_release = frame_of(start + 0.6)
    hand_event(c, track.first_frame(track.f0, f_release, inside=True, polygon=c.layout.zone(hole).points),
                hole, seat, "enter")
    c.state.cards[hole] = []
    c.commit(f_release)
    c.emit_zone_cards(f_release, hole)
    muck = c.state.cards.setdefault("muck", [])
    t_land = start + 1.25
    for card in cards:
        down = card_object(card.card, face_up=False, x=card.x, y=card.y, angle=card.angle_deg)
        mx, my, ma = c.geo.muck_spot(card.card.index)
        c.slides.append(CardSlide(card=down, t0=start + 0.6, t1=t_land, to=(mx, my, ma)))
        muck.append(card_object(card.card, face_up=False, x=mx, y=my, angle=ma))
    c.commit(frame_of(t_land))
    c.emit_zone_cards(frame_of(t_land), "muck")
    return t_land


def do_fold(c: Compiler, action: sp.Fold, start: float) -> float:
    end = _fold(c, action.seat, start)
    c.expect(rules=[], span=(start, end), action=action, note="fold")
    return end


def do_out_of_turn(c: Compiler, action: sp.OutOfTurn, start: float) -> float:
    if action.act == "push":
        end = _push(c, action, start, trips=1, trip_duration=1.2, gap=0.0, splash=False)
    elif action.act == "tap":
        end = _tap(c, action.seat, 2, start)
    else:
        end = _fold(c, action.seat, start)
    c.expect(rules=[(RuleId.OUT_OF_TURN.value, action.seat)], span=(start, end), action=action,
             note=f"seat {action.seat} acts ({action.act}) out of turn")
    return end


def do_declaration(c: Compiler, action: sp.DeclarationAction, start: float) -> float:
    frame = frame_of(start)
    c.emit(frame, Declaration.model_validate({**c.base(frame), "seat": action.seat,
                                              "declaration": action.declaration, "amount": action.amount}))
    c.expect(rules=[], span=(start, start), action=action, note="declaration")
    return start


def do_showdown(c: Compiler, action: sp.Showdown, start: float) -> float:
    t = start
    for seat in action.seats:
        hole = f"hole_{seat}"
        cards = c.state.cards.get(hole, [])
        if not cards:
            raise c.error(f"seat {seat} has no cards to show", field=".seats")
        out = c.geo.outside(seat)
        hx, hy = c.geo.centre(hole)
        make_track(c, seat, [Key(t, *out, 70), Key(t + 0.45, hx, hy, 30), Key(t + 0.6, hx, hy, 25),
                         Key(t + 1.1, *out, 70)])
        frame = frame_of(t + 0.6)
        c.state.cards[hole] = [card_object(x.card, face_up=True, x=x.x, y=x.y, angle=x.angle_deg) for x in cards]
        c.commit(frame)
        c.emit_zone_cards(frame, hole)
        t += 1.3
    c.expect(rules=[], span=(start, t), action=action, note="showdown")
    return t


Handler = Callable[["Compiler", Any, float], float]


def run_action(c: Compiler, action: sp.ActionBase, start: float) -> float:
    """Compile one action starting at `start`; returns when it ends."""
    from floorman.datasets.scenario_dealer import DEALER_HANDLERS
    from floorman.datasets.scenario_infractions import INFRACTION_HANDLERS

    handlers: dict[type[sp.ActionBase], Handler] = {
        sp.Push: do_push, sp.StringBet: do_string_bet, sp.Splash: do_splash, sp.PostBlinds: do_post_blinds,
        sp.Tap: do_tap, sp.Fold: do_fold, sp.OutOfTurn: do_out_of_turn, sp.DeclarationAction: do_declaration,
        sp.Showdown: do_showdown, **DEALER_HANDLERS, **INFRACTION_HANDLERS,
    }
    handler = handlers.get(type(action))
    if handler is None:
        raise c.error(f"internal: no handler for action {type(action).__name__}")
    return handler(c, action, start)

