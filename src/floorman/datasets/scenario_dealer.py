"""The dealer's actions: shuffle, deal, burn, board cards, gather, award, change, button moves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from floorman.core.events import ButtonMoved, CardDealt
from floorman.core.events import Shuffle as ShuffleEvent
from floorman.core.rule_ids import RuleId
from floorman.datasets import scenario as sp
from floorman.datasets.scenario_actions import Handler, hand_event, make_track
from floorman.datasets.scenario_motion import CardSlide, Carry, Key, card_object, frame_of, piles_of
from floorman.datasets.scene import HandPose

if TYPE_CHECKING:
    from floorman.datasets.timeline import Compiler


def deal_card(c: Compiler, *, zone: str, spot: tuple[float, float, float], face_up: bool, t: float,
              duration: float, wanted: str | None = None, seat: int | None = None) -> float:
    """One card from the stub to `spot` in `zone`: the stub shrinks at t, the card lands at t + duration."""
    card = c.draw(wanted, field=".cards")
    dx, dy = c.geo.deck_spot()
    c.commit(frame_of(t))
    c.slides.append(CardSlide(card=card_object(card, face_up=face_up, x=dx, y=dy, angle=0.0), t0=t,
                              t1=t + duration, to=spot))
    c.state.cards.setdefault(zone, []).append(card_object(card, face_up=face_up, x=spot[0], y=spot[1],
                                                          angle=spot[2]))
    land = frame_of(t + duration)
    c.commit(land)
    c.action_started(None)
    c.emit(land, CardDealt.model_validate({**c.base(land), "to_zone": zone, "seat": seat, "face_up": face_up,
                                           "card": str(card) if face_up else None}))
    c.emit_zone_cards(land, zone)
    return t + duration


def _dealer_at_deck(c: Compiler, start: float, end: float, *, wiggles: int) -> None:
    """A dealer hand that comes to the stub, pitches `wiggles` times, and goes back."""
    out = c.geo.outside(None)
    dx, dy = c.geo.deck_spot()
    hx, hy = dx + 10.0, dy - 75.0
    keys = [Key(start - 0.35, *out, 80), Key(start, hx, hy, 45)]
    span = max(end - start, 0.1)
    for k in range(wiggles):
        t = start + span * (k + 0.5) / max(wiggles, 1)
        keys.append(Key(t, hx + 25.0, hy + 30.0, 40))
    keys += [Key(end, hx, hy, 45), Key(end + 0.4, *out, 80)]
    make_track(c, None, keys, pose=HandPose.CUPPED)


def do_shuffle(c: Compiler, action: sp.Shuffle, start: float) -> float:
    dx, dy = c.geo.deck_spot()
    t = start + 0.4
    on_table = [(zone, cards) for zone, cards in sorted(c.state.cards.items()) if cards]
    for zone, cards in on_table:
        c.state.cards[zone] = []
        c.commit(frame_of(t))
        c.emit_zone_cards(frame_of(t), zone)
        for card in cards:
            down = card_object(card.card, face_up=card.face_up, x=card.x, y=card.y, angle=card.angle_deg)
            c.slides.append(CardSlide(card=down, t0=t, t1=t + 0.5, to=(dx, dy, 0.0)))
        t += 0.15
    t += 0.5
    c.new_deck()
    c.action_started(None)
    c.commit(frame_of(t))
    frame = frame_of(t)
    c.emit(frame, ShuffleEvent.model_validate(c.base(frame)))
    end = t + action.duration
    _dealer_at_deck(c, start + 0.35, end, wiggles=max(2, int(action.duration * 2)))
    c.expect(rules=[], span=(start, end), action=action, note="shuffle")
    return end


def do_deal(c: Compiler, action: sp.Deal, start: float) -> float:
    seats = list(c.spec.seat_numbers if action.seats is None else sorted(action.seats))
    after_button = [s for s in seats if s > c.state.button_seat] + [s for s in seats if s <= c.state.button_seat]
    t = start + 0.3
    for round_ in range(2):
        for seat in after_button:
            explicit = (action.cards or {}).get(seat)
            face_up = action.exposed is not None and action.exposed.seat == seat and action.exposed.index == round_ + 1
            t = deal_card(c, zone=f"hole_{seat}", spot=c.geo.hole_spot(seat, round_), face_up=face_up, t=t,
                          duration=action.card_time, wanted=explicit[round_] if explicit else None, seat=seat)
    _dealer_at_deck(c, start + 0.3, t, wiggles=2 * len(seats))
    rules = [(RuleId.CARD_EXPOSED_DURING_DEAL.value, None)] if action.exposed is not None else []
    c.expect(rules=rules, span=(start, t), action=action, note="a card exposed during the deal")
    return t + 0.4


def _burn(c: Compiler, t: float) -> float:
    muck = c.state.cards.get("muck", [])
    return deal_card(c, zone="muck", spot=c.geo.muck_spot(len(muck) + 60), face_up=False, t=t, duration=0.35)


def do_burn(c: Compiler, action: sp.Burn, start: float) -> float:
    end = _burn(c, start + 0.3)
    _dealer_at_deck(c, start + 0.3, end, wiggles=1)
    c.expect(rules=[], span=(start, end), action=action, note="burn")
    return end + 0.4


def do_board(c: Compiler, action: sp.BoardFields, start: float) -> float:
    count = 3 if isinstance(action, sp.Flop) else 1
    board = c.state.cards.get("board", [])
    if len(board) + count > 5:
        raise c.error(f"the board already holds {len(board)} cards")
    t = start + 0.3
    if action.burn:
        t = _burn(c, t) + 0.15
    for k in range(count):
        wanted = action.cards[k] if action.cards else None
        t = deal_card(c, zone="board", spot=c.geo.board_spot(len(c.state.cards.get("board", []))), face_up=True,
                      t=t, duration=0.4, wanted=wanted) + 0.1
    _dealer_at_deck(c, start + 0.3, t, wiggles=count + 1)
    rules: list[tuple[str, int | None]] = []
    if action.premature:
        rules.append((RuleId.PREMATURE_BOARD_CARD.value, None))
    if not action.burn:
        rules.append((RuleId.BURN_CARD_ERROR.value, None))
    c.expect(rules=rules, span=(start, t), action=action, note=f"{action.__class__.__name__.lower()} "
             f"{'before the betting round ended' if action.premature else ''}"
             f"{' without a burn card' if not action.burn else ''}".strip())
    return t + 0.4


def do_gather(c: Compiler, action: sp.Gather, start: float) -> float:
    seats = [s for s in c.spec.seat_numbers if c.state.piles.get(f"bet_{s}")]
    if not seats:
        raise c.error("there are no bets to gather")
    out = c.geo.outside(None)
    px, py = c.geo.centre("pot")
    keys = [Key(start, *out, 80)]
    t = start
    stops: list[tuple[int, float, float]] = []
    for seat in seats:
        bx, by = c.geo.centre(f"bet_{seat}")
        keys += [Key(t + 0.55, bx, by, 45), Key(t + 0.65, bx, by, 35), Key(t + 1.15, px, py, 35)]
        stops.append((seat, t + 0.65, t + 1.15))
        t += 1.2
    keys.append(Key(t + 0.5, *out, 80))
    carries = tuple(Carry(frame_of(a), frame_of(b), piles=tuple(c.state.piles[f"bet_{s}"])) for s, a, b in stops)
    track = make_track(c, None, keys, carries=carries)
    c.action_started(None)
    for seat, t_pick, t_drop in stops:
        zone = f"bet_{seat}"
        f_pick, f_drop = frame_of(t_pick), frame_of(t_drop)
        f_enter = track.first_frame(max(track.f0, f_pick - 20), f_pick, inside=True,
                                    polygon=c.layout.zone(zone).points)
        hand_event(c, f_enter, zone, None, "enter")
        chips = c.zone_chips(zone)
        c.set_zone_chips(zone, [])
        c.commit(f_pick)
        c.emit_zone_chips(f_pick, zone)
        c.add_chips("pot", chips)
        c.commit(f_drop)
        c.emit_zone_chips(f_drop, "pot")
    c.expect(rules=[], span=(start, t), action=action, note="gather")
    return t + 0.5


def do_award(c: Compiler, action: sp.Award, start: float) -> float:
    pot = c.zone_chips("pot")
    if not pot:
        raise c.error("the pot is empty")
    out = c.geo.outside(None)
    px, py = c.geo.centre("pot")
    stack = f"stack_{action.seat}"
    sx, sy = c.geo.centre(stack)
    keys = [Key(start, *out, 80), Key(start + 0.6, px, py, 60), Key(start + 0.75, px, py, 50),
            Key(start + 1.7, sx, sy, 60), Key(start + 1.8, sx, sy, 70), Key(start + 2.4, *out, 80)]
    f_pick, f_drop = frame_of(start + 0.75), frame_of(start + 1.7)
    make_track(c, None, keys, carries=(Carry(f_pick, f_drop, piles=tuple(c.state.piles["pot"])),))
    c.set_zone_chips("pot", [])
    c.commit(f_pick)
    c.emit_zone_chips(f_pick, "pot")
    c.add_chips(stack, pot)
    c.commit(f_drop)
    c.emit_zone_chips(f_drop, stack)
    c.expect(rules=[], span=(start, start + 2.4), action=action, note="award")
    return start + 2.4


def do_change(c: Compiler, action: sp.Change, start: float) -> float:
    seat = action.seat
    zone = f"bet_{seat}"
    give = [d for m in (action.bet or {}, action.back or {}) for d, n in sorted(m.items(), reverse=True)
            for _ in range(n)]
    take = [d for d, n in sorted(action.take.items(), reverse=True) for _ in range(n)]
    out = c.geo.outside(None)
    tx, ty = c.geo.centre("dealer_tray")
    bx, by = c.geo.centre(zone)
    keys = [Key(start, *out, 80), Key(start + 0.4, tx, ty, 50), Key(start + 1.1, bx, by, 40),
            Key(start + 1.3, bx, by, 40), Key(start + 2.0, tx, ty, 50), Key(start + 2.4, *out, 80)]
    f_swap = frame_of(start + 1.2)
    track = make_track(c, None, keys, carries=(Carry(frame_of(start + 0.4), f_swap, piles=tuple(piles_of(give))),
                                               Carry(f_swap, frame_of(start + 2.0), piles=tuple(piles_of(take)))))
    hand_event(c, track.first_frame(track.f0, f_swap, inside=True, polygon=c.layout.zone(zone).points), zone,
               None, "enter")
    c.take_chips(zone, take, field=".take")
    c.add_chips(zone, give)
    c.commit(f_swap)
    c.emit_zone_chips(f_swap, zone)
    end = start + 2.4
    if action.back:
        end = _take_back(c, seat, [d for d, n in action.back.items() for _ in range(n)], end + 0.2)
    c.expect(rules=[], span=(start, end), action=action, note="change")
    return end


def _take_back(c: Compiler, seat: int, chips: list[int], start: float) -> float:
    """The player brings his change from the bet zone back to his stack."""
    zone, stack = f"bet_{seat}", f"stack_{seat}"
    out = c.geo.outside(seat)
    bx, by = c.geo.centre(zone)
    sx, sy = c.geo.centre(stack)
    keys = [Key(start, *out, 70), Key(start + 0.5, bx, by, 40), Key(start + 0.6, bx, by, 35),
            Key(start + 1.05, sx, sy, 40), Key(start + 1.5, *out, 70)]
    f_pick, f_drop = frame_of(start + 0.6), frame_of(start + 1.05)
    track = make_track(c, seat, keys, carries=(Carry(f_pick, f_drop, piles=tuple(piles_of(chips))),))
    poly = c.layout.zone(zone).points
    hand_event(c, track.first_frame(track.f0, f_pick, inside=True, polygon=poly), zone, seat, "enter")
    c.take_chips(zone, chips, field=".back")
    c.commit(f_pick)
    c.emit_zone_chips(f_pick, zone)
    hand_event(c, track.first_frame(f_pick, f_drop, inside=False, polygon=poly), zone, seat, "leave", "chips")
    c.add_chips(stack, chips)
    c.commit(f_drop)
    c.emit_zone_chips(f_drop, stack)
    return start + 1.5


def do_move_button(c: Compiler, action: sp.MoveButton, start: float) -> float:
    seats = list(c.spec.seat_numbers)
    new = action.seat
    if new is None:
        later = [s for s in seats if s > c.state.button_seat]
        new = later[0] if later else seats[0]
    old_spot, new_spot = c.state.button or c.geo.button_spot(new), c.geo.button_spot(new)
    out = c.geo.outside(None)
    keys = [Key(start, *out, 80), Key(start + 0.6, *old_spot, 30), Key(start + 1.4, *new_spot, 30),
            Key(start + 2.0, *out, 80)]
    make_track(c, None, keys, carries=(Carry(frame_of(start + 0.6), frame_of(start + 1.4), button=True),))
    c.state.button = None
    c.commit(frame_of(start + 0.6))
    c.state.button, c.state.button_seat = new_spot, new
    land = frame_of(start + 1.4)
    c.commit(land)
    c.emit(land, ButtonMoved.model_validate({**c.base(land), "seat": new}))
    c.expect(rules=[], span=(start, start + 2.0), action=action, note="button")
    return start + 2.0


DEALER_HANDLERS: dict[type[sp.ActionBase], Handler] = {
    sp.Shuffle: do_shuffle, sp.Deal: do_deal, sp.Burn: do_burn, sp.Flop: do_board, sp.Turn: do_board,
    sp.River: do_board, sp.Gather: do_gather, sp.Award: do_award, sp.Change: do_change,
    sp.MoveButton: do_move_button,
}
