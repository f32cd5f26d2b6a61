"""The per-table hand state machine, driven by core events (docs/events.md).

`HandState.update(event)` follows one table: button, blinds, hand boundaries (a shuffle starts the next hand),
streets (board cards), seats in the hand, folds (taps facing a bet, undone where the bet was read unsure and the
seat acts again or the dealer deals on with its cards still in its hole zone; hole cards that leave the hole zone and
land in the muck; cards that come back were a peek), pushes grouped into actions (the trips of one seat until
someone else acts or a card comes), whose turn it is, the amount to call, the last full raise, all-ins, who may
still raise, and the pot. Each push is ruled by `rule_bet` under the table's rulebook, so the amount the next
player faces is the ruled one (a 45-A call with change counts as a call). An action out of turn is recorded
(and binds) but leaves the turn where it was. A burn or board card that comes while a player still owes an
action is flagged (`card_while_round_open`) and its street opens only once that betting round is over (unless
only amounts read unsure keep the round open: the dealer, who saw the bets, is then right). Until each seat has
acted once on a street the order of play does not rest on the amounts: a seat that has shown nothing yet surely
owes an action however unsure the chips (`owed_whatever_amounts`, `HandAction.skipped`, `owed_at_card`).
Blinds follow the dead-button system and the pots are layered by the all-ins (floorman.rules.pots). Antes are
dead money: a push of the level's ante before the hole cards (or the part of a blind post above the blind, the
big-blind ante) goes into the pot without counting as a bet.
`update` returns the `HandAction`s the event completed; `snapshot()` gives a frozen view.

It never raises on a well-typed event that makes no sense here (a push with no hand running, a fold of a seat
not in the hand): such events are counted in `ignored` and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pydantic import ValidationError

from floorman.core.chips import ChipCount
from floorman.core.events import (
    BlindsLevel,
    ButtonMoved,
    CardDealt,
    ChipsPushed,
    Declaration,
    EventBase,
    HandZone,
    Shuffle,
    Tap,
    ZoneCards,
    ZoneChips,
)
from floorman.rules.hand_model import (
    STREET_BY_BOARD,
    ActionKind,
    HandAction,
    HandSnapshot,
    PendingPush,
    SeatView,
    Street,
)
from floorman.rules.params import ReopenByAccumulation
from floorman.rules.pots import Pot, blind_seats, side_pots
from floorman.rules.rulebook import Rulebook
from floorman.rules.ruling_models import BetAmount, BetRuling, BetSituation, DeclarationWord, RaiseTo
from floorman.rules.rulings import rule_bet

__all__ = ["ActionKind", "HandAction", "HandSnapshot", "HandState", "PendingPush", "SeatView", "Street"]

logger = logging.getLogger(__name__)

@dataclass(slots=True, eq=False)
class _Seat:
    seat: int
    stack: int | None = None
    stack_sure: float = 1.0  # how sure the stack zone's last reading was (`zone_chips.confidence`)
    in_hand: bool = False
    folded: bool = False
    fold_confidence: float = 1.0  # a fold read from a tap facing a bet is only as sure as the amounts
    all_in: bool = False
    street_in: int = 0
    hand_in: int = 0
    acted: bool = False
    raise_closed: bool = False


@dataclass(slots=True)
class _Pending:
    seat: int
    trips: list[tuple[ChipCount, ...]] = field(default_factory=list)
    seq: int = 0
    t: float = 0.0
    out_of_turn: bool = False
    facing_to: int = 0
    could_raise: bool = True
    frame: int = 0
    skipped: int | None = None
    t_start: float = 0.0


class HandState:
    """One table's hand, event by event."""

    def __init__(self, *, table_id: str, rulebook: Rulebook, seats: Iterable[int] = (),
                 sure_fold: float = 0.8) -> None:
        self.table_id = table_id
        self.rulebook = rulebook
        self.sure_fold = sure_fold
        """A fold less sure than this (a tap facing a bet the camera could not count) gives way to the dealer going
        on dealing and to the seat acting again: see `_dealer_goes_on` and `_acts_again`."""
        self._seats: dict[int, _Seat] = {s: _Seat(seat=s) for s in seats}
        self._order = [self._seats[s] for s in sorted(self._seats)]
        self.hand = 0
        self.street = Street.WAITING
        self.button: int | None = None
        self.blinds: tuple[int, int] = (0, 0)
        self.ante = 0
        self._previous_big: int | None = None
        self.anted: set[int] = set()
        """Seats that posted an ante (or a big-blind ante) in the current hand."""
        self.board: list[str] = []
        self.facing_bet_to = 0
        self.last_full_raise = 0
        self.facing_all_in = False
        self.log: list[HandAction] = []
        self.ignored = 0
        self._board_cards = 0
        self._blind_seats: dict[int, ActionKind] = {}
        self._last_seat: int | None = None
        self._pending: _Pending | None = None
        self._declared: dict[int, DeclarationWord | RaiseTo | BetAmount] = {}
        self._deferred_street: Street | None = None
        self.dealt: set[int] = set()
        """Seats dealt hole cards in the current hand."""
        self.last_folder: int | None = None
        """The last seat that folded in the current hand."""
        self.blinds_posted = 0
        """Blinds posted in the current hand (none during a chip race)."""
        self.card_while_round_open = False
        """Set by each card event: it came while a live player still owed an action (CATALOG E2)."""
        self.chip_doubt = 1.0
        """How sure the current hand's chip record is: its least sure push (`chips_pushed.confidence`). The hand's
        amounts, and so the turn and every betting ruling, are only as sure as that."""
        self.lifted: dict[int, tuple[int, float, int]] = {}
        """Seats whose hole cards left the hole zone and have not reached the muck: seat -> (seq, t, frame)."""
        self._hole_left: set[int] = set()  # seats whose hole zone was seen empty since they were dealt in
        self.owed_at_card: int | None = None
        """Set by each card event: the seat that surely owed an action whatever the amounts read when it came
        (`owed_whatever_amounts`), so E2 needs no sure chip record; None when none did."""
        self._anchor: int | None = None
        self._moved: set[int] = set()
        self._stirred: set[int] = set()
        self._seated: set[int] = set()
        self._order_doubt = False
        self._bet_left: dict[int, float] = {}  # per seat: when its own hand last left its bet zone
        self._muck_count = 0
        self._burn_landing = False
        self._handlers: dict[type[EventBase], Callable[[EventBase], list[HandAction]]] = {
            BlindsLevel: self._on_blinds, ButtonMoved: self._on_button, Shuffle: self._on_shuffle,
            CardDealt: self._on_card, ChipsPushed: self._on_push, Tap: self._on_tap, ZoneCards: self._on_cards,
            ZoneChips: self._on_chips, Declaration: self._on_declaration, HandZone: self._on_hand,
        }

    # ------------------------------------------------------------------------------------------- queries

    @property
    def seats_in_hand(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self._ordered() if s.in_hand and not s.folded)

    @property
    def all_in_seats(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self._ordered() if s.in_hand and s.all_in)

    @property
    def pot(self) -> int:
        """Everything committed this hand (gathered or still in front of the players)."""
        return sum(s.hand_in for s in self._seats.values())

    @property
    def pots(self) -> list[Pot]:
        """The main pot and the side pots of the current hand (floorman.rules.pots.side_pots)."""
        contributions = {s.seat: s.hand_in for s in self._order if s.hand_in > 0}
        live = [s.seat for s in self._order if s.in_hand and not s.folded]
        return side_pots(contributions, live=live, all_in=[s.seat for s in self._order if s.all_in])

    @property
    def actor(self) -> int | None:
        """Whose turn it is; None between hands, while blinds are pending, or when the round is closed."""
        last = self._last_seat
        if self.street is Street.WAITING or self._blind_seats or last is None:
            return None
        facing = self.facing_bet_to
        live = all_in = 0
        owing: list[_Seat] = []
        for seat in self._order:
            if seat.in_hand:
                all_in += seat.all_in
                if not seat.folded:
                    live += 1
                    if not seat.all_in and (not seat.acted or seat.street_in < facing):
                        owing.append(seat)
        if live < 2 or not owing:
            return None
        if len(owing) == 1 and live - all_in <= 1 and owing[0].street_in >= facing:
            return None
        return next((s.seat for s in owing if s.seat > last), owing[0].seat)  # clockwise from the last actor

    @property
    def owed_whatever_amounts(self) -> int | None:
        """The first seat in this street's order that surely still owes an action, whatever the chips were read
        as: dealt in, not folded, not all-in, with nothing of its own seen on this street (no push, tap, fold or
        declaration, no hand of its seat seen on the table), while another seat dealt in is
        neither folded nor all-in. Until each seat has acted once the order of play does not rest on the amounts
        (preflop from the big blind on, later streets from the button on), so such a seat owes an action however
        the bets were counted. None when there is none, when the button or the blinds are not known yet, or when
        the order itself is in doubt: a seat dealt in that the blinds were not placed for (its stack read empty
        at the shuffle), another seat pushing while the blinds were still owed, or a card that came while the
        round was open (its street then opens when the amounts say the round is over)."""
        return next((s.seat for s in self._first_orbit() if self._quiet(s.seat)), None)

    def _skipped_by(self, seat: int) -> int | None:
        """The seat that `seat`, acting now for the first time on this street, surely skipped: one before it in
        the street's order that still owes an action whatever the amounts (see `owed_whatever_amounts`)."""
        if seat in self._moved:
            return None  # a second action on the street: whose turn it is now rests on the amounts
        skipped = None
        for state in self._first_orbit():
            if state.seat == seat:
                return skipped
            if skipped is None and self._quiet(state.seat):
                skipped = state.seat
        return None  # a seat not seen dealt in: where it stands in the order is not known

    def _first_orbit(self) -> list[_Seat]:
        """The seats still to be reckoned with in this street's order (see `owed_whatever_amounts`), or none."""
        if self.street is Street.WAITING or self._blind_seats or self._anchor is None or self._order_doubt \
                or self._deferred_street is not None or not self.dealt <= self._seated:
            return []
        live = [s for s in self._clockwise_after(self._anchor)  # (a stack read empty: all-in, whatever was ruled)
                if s.seat in self.dealt and s.in_hand and not s.folded and not s.all_in and s.stack != 0]
        return live if len(live) >= 2 else []

    def _quiet(self, seat: int) -> bool:
        """Nothing of the seat was seen on this street: no action, no hand of its own in its zones, no cards lifted."""
        return seat not in self._moved and seat not in self._stirred and seat not in self.lifted

    @property
    def round_open(self) -> bool:
        """A live player who is not all-in still owes an action in this betting round."""
        return self.actor is not None

    @property
    def hand_over(self) -> bool:
        """The hand was dealt and at most one player is left in it (won by folds)."""
        if not self.dealt or self.street is Street.WAITING:
            return False
        live = 0
        for seat in self._order:
            if seat.in_hand and not seat.folded:
                live += 1
                if live > 1:
                    return False
        return True

    @property
    def hand_over_confidence(self) -> float:
        """How sure `hand_over` is: its least sure fold (a fold seen as cards in the muck is sure; one read from a
        tap while facing a bet is only as sure as the hand's chip record, `chip_doubt`)."""
        return min((seat.fold_confidence for seat in self._order if seat.in_hand and seat.folded), default=1.0)

    @property
    def pending(self) -> PendingPush | None:
        """The push in progress (completed when another seat acts, a card comes or `flush`)."""
        pending = self._pending
        if pending is None or not pending.trips:
            return None
        state = self._seat(pending.seat)
        value = sum(c.denom * c.count for trip in pending.trips for c in trip)
        return PendingPush(seat=pending.seat, trips=tuple(pending.trips), value=value, in_before=state.street_in,
                           facing_to=pending.facing_to, declared=pending.seat in self._declared,
                           out_of_turn=pending.out_of_turn, seq=pending.seq, t=pending.t, frame=pending.frame,
                           confidence=self.chip_doubt)

    def amount_to_call(self, seat: int) -> int:
        state = self._seats.get(seat)
        if state is None or not state.in_hand or state.folded:
            return 0
        owed = self.facing_bet_to - state.street_in
        return max(0, owed if state.stack is None else min(owed, state.stack))

    def may_raise(self, seat: int) -> bool:
        state = self._seats.get(seat)
        return state is not None and state.in_hand and not state.folded and not state.all_in \
            and not state.raise_closed

    def snapshot(self) -> HandSnapshot:
        views = tuple(SeatView(seat=s.seat, stack=s.stack, in_hand=s.in_hand, folded=s.folded, all_in=s.all_in,
                               street_in=s.street_in, hand_in=s.hand_in, may_raise=self.may_raise(s.seat))
                      for s in self._ordered())
        return HandSnapshot(hand=self.hand, street=self.street, button=self.button, blinds=self.blinds,
                            board=tuple(self.board), seats=views, actor=self.actor,
                            facing_bet_to=self.facing_bet_to, last_full_raise=self.last_full_raise, pot=self.pot)

    # ------------------------------------------------------------------------------------------- updates

    def update(self, event: EventBase) -> tuple[HandAction, ...]:
        """Apply one event; return the actions it completed."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return ()
        done = handler(event)
        if done:
            self.log.extend(done)
            self._close_deferred_street()
        return tuple(done)

    def flush(self) -> tuple[HandAction, ...]:
        """Complete a pending push now (the seat's trips so far form one action)."""
        done = self._finish_pending()
        self.log.extend(done)
        self._close_deferred_street()
        return tuple(done)

    def _close_deferred_street(self) -> None:
        """Cards that came early (E2) open their street once the betting round they interrupted is over."""
        if self._deferred_street is not None and self._pending is None and self.actor is None:
            street, self._deferred_street = self._deferred_street, None
            self._new_street(street)
            self._order_doubt = True  # the street opened when the amounts said so: its order rests on them

    def _on_blinds(self, event: EventBase) -> list[HandAction]:
        assert isinstance(event, BlindsLevel)
        self.blinds = (event.small_blind, event.big_blind)
        self.ante = event.ante
        return []

    def _on_button(self, event: EventBase) -> list[HandAction]:
        """The button seen (again): a push still pending from before it was first seen is ruled as it came, the
        button unknown (from a tilted 4K camera the button, boxed as a stack of 25s, was first seen 0.03 s after the
        small blind's push landed, and the blind, ruled against the big blind, was an under-call: string_bet_02)."""
        assert isinstance(event, ButtonMoved)
        done = self._finish_pending() if self.button is None else []
        self.button = event.seat
        self._seat(event.seat)
        return done

    def _on_shuffle(self, event: EventBase) -> list[HandAction]:
        del event
        done = self._finish_pending()
        self._start_hand()
        return done

    def _on_declaration(self, event: EventBase) -> list[HandAction]:
        assert isinstance(event, Declaration)
        done = self._finish_pending() if self._pending and self._pending.seat != event.seat else []
        self._stirred.add(event.seat)  # a word said is an action, though only a check or fold completes one here
        word = event.declaration
        if word in ("call", "raise", "all-in"):
            self._declared[event.seat] = word
        elif word == "raise_to" and event.amount:
            self._declared[event.seat] = RaiseTo(raise_to=event.amount)
        elif word == "bet" and event.amount:
            self._declared[event.seat] = BetAmount(bet=event.amount)
        elif word in ("check", "fold"):
            done += self._act_without_chips(event.seat, fold=word == "fold", seq=event.seq, t=event.t,
                                            frame=event.frame)
        return done

    def _on_card(self, event: EventBase) -> list[HandAction]:
        assert isinstance(event, CardDealt)
        done = self._finish_pending()
        self.card_while_round_open, self.owed_at_card = False, None
        if event.to_zone == "muck" and not event.face_up and self.lifted:
            self._burn_landing = False  # a seat's hole cards are in the air: this is them landing (a fold), no burn
            return done
        self._burn_landing = event.to_zone == "muck"
        if event.to_zone in ("board", "muck"):
            self._dealer_goes_on()
        if event.to_zone.startswith("hole_") and event.seat is not None:
            if self.street is Street.WAITING:
                self._start_hand()
            self._seat(event.seat).in_hand = True
            self.dealt.add(event.seat)
        elif event.to_zone in ("board", "muck") and self.street is not Street.WAITING and self.dealt:
            opening = event.to_zone == "board" and STREET_BY_BOARD.get(self._board_cards + 1) is self.street
            self.card_while_round_open = self.round_open and not self.hand_over and not opening
            self.owed_at_card = self.owed_whatever_amounts if self.card_while_round_open else None
            if event.to_zone == "board" and not self.hand_over:
                self._board_card(event.card)
        return done

    def _acts_again(self, seat: int) -> None:
        """A seat folded only by a tap read unsure (facing a bet the camera could not count) that pushes chips or
        taps again is still in the hand: that tap was a check."""
        state = self._seats.get(seat)
        if state is not None and state.in_hand and state.folded and state.fold_confidence < self.sure_fold:
            state.folded, state.fold_confidence = False, 1.0
            logger.info("table %s seat %s acts again; its unsure fold was a check", self.table_id, seat)

    def _dealer_goes_on(self) -> None:
        """A burn or board card from the stub: the dealer, who saw the table, deals on. A seat folded only by a tap
        read unsure (facing a bet the camera could not count) whose hole cards are still in its hole zone is still in
        the hand: a player who folds gives up their cards, and the dealer deals on with them in play, so that tap was
        a check (from 1280x720, a small blind of two chips read as three at 0.14 made the big blind's check a fold,
        and the flop's out-of-turn tap that skipped it went unflagged). While the hand is over only by such folds,
        every one of them was a check, wherever its cards are. A hand surely over stays over (dealing on is then
        rabbit hunting, F6)."""
        over_unsure = self.hand_over and self.hand_over_confidence < self.sure_fold
        for seat in self._order:
            if seat.in_hand and seat.folded and seat.fold_confidence < self.sure_fold and (
                    over_unsure or seat.seat not in self._hole_left):
                seat.folded, seat.fold_confidence = False, 1.0
                logger.info("table %s seat %s: the dealer deals on; its unsure fold was a check", self.table_id,
                            seat.seat)

    def _board_card(self, card: str | None) -> None:
        self._board_cards += 1
        if card is not None:
            self.board.append(card)
        street = STREET_BY_BOARD.get(self._board_cards, Street.RIVER)
        if self.card_while_round_open and (self.owed_at_card is not None or self._deferred_street is not None
                                           or self.chip_doubt >= self.sure_fold):
            self._deferred_street = street  # the round goes on; the street opens when it is over (003 2-13..2-16)
        elif street is not self.street:  # (a round open only by amounts read unsure: the dealer, who saw it, is right)
            self._new_street(street)

    def _on_push(self, event: EventBase) -> list[HandAction]:
        assert isinstance(event, ChipsPushed)
        if self.street is Street.WAITING:
            self._ignore("chips pushed with no hand running", event)
            return []
        if self._is_ante(event):
            self._post_ante(self._seat(event.seat), event.value)
            return []
        done: list[HandAction] = []
        if self._pending is not None and (self._pending.seat != event.seat or event.trip == 1):
            done = self._finish_pending()
        self._acts_again(event.seat)
        if self._pending is None:
            actor = self.actor
            if self._blind_seats and event.seat not in self._blind_seats:
                self._order_doubt = True  # a blind from a seat the blinds were not placed on, or a push before them
            skipped = None if event.seat in self._blind_seats else self._skipped_by(event.seat)
            self._pending = _Pending(seat=event.seat, seq=event.seq, t=event.t, frame=event.frame,
                                     out_of_turn=actor is not None and actor != event.seat,
                                     facing_to=self.facing_bet_to, could_raise=self.may_raise(event.seat),
                                     skipped=skipped, t_start=event.t_start)
            if event.seat not in self._blind_seats:
                self._moved.add(event.seat)
        self._pending.trips.append(event.chips)
        self.chip_doubt = min(self.chip_doubt, event.confidence)
        if event.seat in self._blind_seats:
            done += self._finish_pending()
        return done

    def _is_ante(self, event: ChipsPushed) -> bool:
        """An ante: the level's ante pushed before the hole cards by a seat that owes no blind now and has not
        anted (or less, all-in)."""
        if not self.ante or self.dealt or event.seat in self._blind_seats or event.seat in self.anted:
            return False
        stack = self._seats[event.seat].stack if event.seat in self._seats else None
        return event.value == self.ante or (event.value < self.ante and stack == 0)

    def _post_ante(self, state: _Seat, amount: int) -> None:
        self.anted.add(state.seat)
        state.in_hand = True
        state.hand_in += amount
        state.all_in = state.stack == 0

    def _on_tap(self, event: EventBase) -> list[HandAction]:
        assert isinstance(event, Tap)
        done = self._finish_pending()
        self._acts_again(event.seat)
        return done + self._act_without_chips(event.seat, fold=None, seq=event.seq, t=event.t, frame=event.frame,
                                              sure=event.confidence)

    def _on_cards(self, event: EventBase) -> list[HandAction]:
        """Hole cards leaving the hole zone are a fold once they land in the muck; back in place, a peek."""
        assert isinstance(event, ZoneCards)
        if event.zone == "muck":
            return self._on_muck(event)
        seat = event.seat
        if not event.zone.startswith("hole_") or seat is None or self.street is Street.WAITING:
            return []
        if event.face_down or event.face_up:
            self.lifted.pop(seat, None)
            self._hole_left.discard(seat)
            return []
        self._hole_left.add(seat)
        state = self._seats.get(seat)
        if state is None or not state.in_hand or state.folded or (self.actor is None and not self._pending):
            return []
        self.lifted[seat] = (event.seq, event.t, event.frame)
        return self._finish_pending()

    def _on_muck(self, event: ZoneCards) -> list[HandAction]:
        grown = event.face_down > self._muck_count
        self._muck_count = event.face_down
        if self._burn_landing:  # the muck grew by a burn card
            self._burn_landing = False
            return []
        if not grown or not self.lifted:
            return []
        done = self._finish_pending()
        lifted, self.lifted = self.lifted, {}
        for seat, (seq, t, frame) in lifted.items():
            done += self._act_without_chips(seat, fold=True, seq=seq, t=t, frame=frame)
        return done

    def _on_chips(self, event: EventBase) -> list[HandAction]:
        assert isinstance(event, ZoneChips)
        if event.zone.startswith("stack_") and event.seat is not None:
            seat = self._seat(event.seat)
            # A stack zone read empty right after a reading less sure than `sure_fold` says nothing of the chips:
            # stacks the camera could not count may be stacks it no longer sees (from a 1280x720 camera ~50 degrees
            # from vertical, far seats' stacks read empty made them all-in, and two false F2 followed)
            unseen = event.value == 0 and seat.stack != 0 and seat.stack_sure < self.sure_fold
            seat.stack = None if event.visible_fraction < 1.0 or unseen else event.value
            seat.stack_sure = event.confidence
        return []

    def _on_hand(self, event: EventBase) -> list[HandAction]:
        """A seat's own hand seen on the table may have acted unseen (a tap the camera missed, chips pushed and not
        read): that seat no longer surely owes an action whatever the amounts. (From video a tap was missed while
        the only event of that hand was its coming onto the table over the rail, dev clean_hand_01.)"""
        assert isinstance(event, HandZone)
        if event.seat is not None:
            self._stirred.add(event.seat)
            if event.zone == f"bet_{event.seat}" and event.action == "leave":
                self._bet_left[event.seat] = event.t
        return []

    # ------------------------------------------------------------------------------------------- internals

    def _seat(self, seat: int) -> _Seat:
        state = self._seats.get(seat)
        if state is None:
            state = self._seats[seat] = _Seat(seat=seat)
            self._order = [self._seats[s] for s in sorted(self._seats)]
        return state

    def _ordered(self) -> list[_Seat]:
        return self._order

    def _clockwise_after(self, seat: int) -> list[_Seat]:
        ordered = self._ordered()
        after = [s for s in ordered if s.seat > seat]
        return after + [s for s in ordered if s.seat <= seat]

    def _ignore(self, why: str, event: EventBase) -> None:
        self.ignored += 1
        logger.debug("table %s: ignored event seq %s: %s", self.table_id, event.seq, why)

    def _start_hand(self) -> None:
        self.hand += 1
        self.chip_doubt = 1.0
        self.street = Street.PREFLOP
        self.board = []
        self._board_cards = 0
        self._declared = {}
        self._pending = None
        self._deferred_street = None
        self.dealt = set()
        self.last_folder = None
        self.lifted = {}
        self._hole_left = set()
        self.blinds_posted = 0
        self.anted = set()
        occupied = [s for s in self._ordered() if s.stack is None or s.stack > 0]
        for state in self._seats.values():
            state.in_hand = state in occupied
            state.folded = state.all_in = state.acted = state.raise_closed = False
            state.fold_confidence = 1.0
            state.street_in = state.hand_in = 0
        big_blind = self.blinds[1]
        self.facing_bet_to, self.last_full_raise, self.facing_all_in = big_blind, big_blind, False
        self._blind_seats = self._blind_positions(occupied)
        self._last_seat = next((s for s, kind in self._blind_seats.items() if kind == "post_big_blind"), None)
        self._anchor = self._last_seat
        self._moved, self._stirred = set(), set()
        self._seated, self._order_doubt = {s.seat for s in occupied}, False
        self.owed_at_card = None

    def _blind_positions(self, occupied: list[_Seat]) -> dict[int, ActionKind]:
        seats = blind_seats(seats=[s.seat for s in occupied], button=self.button, previous_big=self._previous_big)
        if seats.big is None:
            return {}
        self._previous_big = seats.big
        positions: dict[int, ActionKind] = {seats.big: "post_big_blind"}
        if seats.small is not None:
            positions[seats.small] = "post_small_blind"
        return positions

    def _new_street(self, street: Street) -> None:
        self.street = street
        for state in self._seats.values():
            state.street_in = 0
            state.acted = state.raise_closed = False
        self.facing_bet_to, self.last_full_raise, self.facing_all_in = 0, self.blinds[1], False
        self._last_seat = self._anchor = self.button
        self._moved, self._stirred = set(), set()
        self._declared = {}

    def _act_without_chips(self, seat: int, *, fold: bool | None, seq: int, t: float, frame: int,
                           sure: float = 1.0) -> list[HandAction]:
        """A check or fold without chips: a declaration (`fold` True/False) or a tap (`fold` None: a fold when
        facing a bet, as sure as the hand's amounts and the tap itself, `sure`)."""
        state = self._seats.get(seat)
        if state is None or not state.in_hand or state.folded or self.street is Street.WAITING:
            return []
        folds = fold if fold is not None else self.facing_bet_to > state.street_in
        actor = self.actor
        out_of_turn = actor is not None and actor != seat
        skipped = self._skipped_by(seat)  # a tap however unsure its chips: a check or a fold, an action either way
        self._moved.add(seat)
        state.acted = True
        if folds:
            state.folded = True
            state.fold_confidence = 1.0 if fold else min(self.chip_doubt, sure)  # a tap facing a bet: by the amounts
            self.last_folder = seat
        if not out_of_turn:  # an action out of turn leaves the turn where it was (000 9-14, 003 8-14)
            self._last_seat = seat
        return [HandAction(hand=self.hand, street=self.street, seat=seat, kind="fold" if folds else "check",
                           confidence=min(self.chip_doubt, sure),
                           total_to=state.street_in, trips=0, seq=seq, t=t, out_of_turn=out_of_turn,
                           frame=frame, skipped=skipped)]

    def _finish_pending(self) -> list[HandAction]:
        pending, self._pending = self._pending, None
        if pending is None or not pending.trips:
            return []
        state = self._seat(pending.seat)
        pushed = sum(c.denom * c.count for trip in pending.trips for c in trip)
        kind = self._blind_seats.pop(pending.seat, None)
        if kind is None and self.button is None and not self.dealt and pushed <= self.blinds[1]:
            # The button not seen yet, no seat is known to owe a blind: a push of a blind or less before the deal is
            # a blind, whichever seat posts it (from a tilted 4K camera the button was first seen 8.5 s into the
            # hand, and the small blind, ruled against the big blind, was an under-call under tda2024)
            kind = "post_big_blind" if pushed == self.blinds[1] else "post_small_blind"
        if kind is not None:
            if not self._blind_seats:
                self._stirred = set()  # the blinds' own hands, posting them, were no action of the round
            return [self._post_blind(state, kind=kind, pushed=pushed, pending=pending)]
        ruling = self._rule(state, pending=pending, pushed=pushed)
        if ruling is None:
            return []
        self._apply(state, ruling, out_of_turn=pending.out_of_turn)
        # a seat surely skipped counts only for chips seen landing under the pushing seat's own hand (its hand left
        # its bet zone after it picked them up), not for a bet read one chip more on a second look
        landed = self._bet_left.get(state.seat, -1.0) >= pending.t_start
        return [HandAction(hand=self.hand, street=self.street, seat=state.seat, kind=ruling.action,
                           total_to=state.street_in, trips=len(pending.trips), seq=pending.seq, t=pending.t,
                           out_of_turn=pending.out_of_turn, ruling=ruling, facing_to=pending.facing_to,
                           could_raise=pending.could_raise, frame=pending.frame,
                           chips=sum(c.count for trip in pending.trips for c in trip), confidence=self.chip_doubt,
                           skipped=pending.skipped if landed else None)]

    def _post_blind(self, state: _Seat, *, kind: ActionKind, pushed: int, pending: _Pending) -> HandAction:
        self.blinds_posted += 1
        state.in_hand = True
        blind = self.blinds[1] if kind == "post_big_blind" else self.blinds[0]
        ante = min(pushed - blind, self.ante) if self.ante and pushed > blind and state.seat not in self.anted else 0
        if ante:
            self.anted.add(state.seat)
        state.street_in += pushed - ante
        state.hand_in += pushed
        state.all_in = state.stack == 0
        return HandAction(hand=self.hand, street=self.street, seat=state.seat, kind=kind, total_to=state.street_in,
                          trips=len(pending.trips), seq=pending.seq, t=pending.t, out_of_turn=False,
                          frame=pending.frame, confidence=self.chip_doubt)

    def _rule(self, state: _Seat, *, pending: _Pending, pushed: int) -> BetRuling | None:
        stack_before = None if state.stack is None else state.stack + pushed
        data = {
            "rulebook": self.rulebook.id, "blinds": self.blinds, "street": self.street.value,
            "facing_bet_to": max(self.facing_bet_to, state.street_in), "actor_in_before": state.street_in,
            "last_raise_size": max(1, self.last_full_raise), "trips": tuple(pending.trips),
            "declaration": self._declared.pop(state.seat, None), "stack_before": stack_before,
            "facing_all_in": self.facing_all_in,
        }
        try:
            situation = BetSituation.model_validate(data)
        except ValidationError as exc:
            self.ignored += 1
            logger.warning("table %s seat %s: push at seq %s cannot be ruled: %s", self.table_id, state.seat,
                           pending.seq, exc.errors()[0]["msg"])
            return None
        return rule_bet(situation=situation, rulebook=self.rulebook)

    def _apply(self, state: _Seat, ruling: BetRuling, *, out_of_turn: bool) -> None:
        total = ruling.total_to
        if ruling.action == "player_choice":
            total = next((o.total_to for o in ruling.options if o.action in ("call", "check")), ruling.total_to)
        state.hand_in += total - state.street_in
        state.street_in = total
        state.all_in = ruling.all_in
        if state.stack is not None and ruling.chips_returned:
            state.stack += ruling.chips_returned
        state.acted = True
        if not out_of_turn:
            self._last_seat = state.seat
        if total > self.facing_bet_to:
            self._raised(state, total=total, ruling=ruling)

    def _raised(self, raiser: _Seat, *, total: int, ruling: BetRuling) -> None:
        full = ruling.reopens_betting
        for other in self._seats.values():
            if other is raiser or not other.in_hand or other.folded:
                continue
            if full:
                other.acted, other.raise_closed = False, False
            elif other.acted or other.raise_closed:  # he acted before these all-ins: closed unless reopened
                other.acted = False
                other.raise_closed = not self._reopened_by_accumulation(other, total=total)
        self.facing_bet_to = total
        self.last_full_raise = ruling.next_last_raise_size
        self.facing_all_in = not full

    def _reopened_by_accumulation(self, seat: _Seat, *, total: int) -> bool:
        """000/004 9-13: a bet doubled by several small all-ins may re-raise; TDA: facing a full raise in all."""
        rule = self.rulebook.parameters.reopen_by_accumulation_threshold.value
        if rule is ReopenByAccumulation.OWN_BET_DOUBLED:
            return seat.street_in > 0 and total >= 2 * seat.street_in
        return total - seat.street_in >= self.last_full_raise
