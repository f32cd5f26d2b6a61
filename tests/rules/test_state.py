"""The hand state machine on handmade event streams."""

from __future__ import annotations

from collections.abc import Iterable

from floorman.core.events import EventBase
from floorman.rules.rulebook import load_rulebook
from floorman.rules.state import HandAction, HandState, Street
from tests.rules.factories import Stream


def feed(state: HandState, *batches: Iterable[EventBase]) -> list[HandAction]:
    done: list[HandAction] = []
    for batch in batches:
        for event in batch:
            done.extend(state.update(event))
    return done


def four_handed(book: str = "tda2024", stacks: int = 10_000) -> tuple[HandState, Stream]:
    """Seats 1-4, button on 1, blinds 100/200 posted by 2 and 3, cards dealt."""
    stream = Stream(stacks={1: stacks, 2: stacks, 3: stacks, 4: stacks})
    state = HandState(table_id="t1", rulebook=load_rulebook(book))
    feed(state, stream.level(100, 200), stream.button(1), stream.seat_stacks(), stream.shuffle(),
         stream.push(2, 100), stream.push(3, 100, 100), stream.deal([2, 3, 4, 1]))
    return state, stream


def test_blinds_posted_and_first_to_act_after_the_big_blind() -> None:
    state, _ = four_handed()
    assert [(a.seat, a.kind, a.total_to) for a in state.log] == [(2, "post_small_blind", 100),
                                                                  (3, "post_big_blind", 200)]
    assert (state.hand, state.street, state.actor, state.facing_bet_to, state.pot) == (1, Street.PREFLOP, 4, 200, 300)
    assert state.amount_to_call(4) == 200 and state.amount_to_call(2) == 100


def test_preflop_round_then_flop_order() -> None:
    state, stream = four_handed()
    done = feed(state, stream.push(4, 500, 100), stream.tap(1), stream.push(2, 500), stream.push(3, 100, 100, 100, 100))
    done += state.flush()
    assert [(a.seat, a.kind, a.total_to) for a in done] == [(4, "raise", 600), (1, "fold", 0), (2, "call", 600),
                                                            (3, "call", 600)]
    assert state.actor is None and state.pot == 1800 and state.last_full_raise == 400
    feed(state, stream.board("AS", "KD", "7C"))
    assert (state.street, state.facing_bet_to, state.actor, state.board) == (Street.FLOP, 0, 2, ["AS", "KD", "7C"])
    feed(state, stream.tap(2), stream.push(3, 500), stream.fold(4))
    assert [(a.seat, a.kind, a.total_to) for a in state.log[-3:]] == [(2, "check", 0), (3, "bet", 500), (4, "fold", 0)]
    assert state.seats_in_hand == (2, 3) and state.actor == 2 and state.amount_to_call(2) == 500


def test_big_blind_option_then_check_closes_the_round() -> None:
    state, stream = four_handed()
    feed(state, stream.push(4, 200), stream.push(1, 200), stream.push(2, 100))
    state.flush()
    assert state.actor == 3  # the big blind has his option
    feed(state, stream.tap(3))
    assert state.log[-1].kind == "check" and state.actor is None


def test_out_of_turn_push_is_recorded_as_such() -> None:
    state, stream = four_handed()
    feed(state, stream.push(1, 200))
    (action,) = state.flush()
    assert (action.seat, action.kind, action.out_of_turn) == (1, "call", True)


def test_multi_chip_call_tda_45_counts_the_ruled_amount() -> None:
    state, stream = four_handed()
    feed(state, stream.push(4, 500, 100), stream.tap(1))
    feed(state, stream.push(2, 500, 100))  # 100 in, facing 600: 600 pushed, removing a 100 leaves 500 = call
    (action,) = state.flush()
    assert (action.kind, action.total_to) == ("call", 600)
    assert action.ruling is not None and action.ruling.chips_returned == 100


def test_string_bet_004_9_17_first_trip_only() -> None:
    state, stream = four_handed("club_004")
    feed(state, stream.push(4, 200), stream.push(4, 500, trip=2))
    (action,) = state.flush()
    assert (action.kind, action.total_to, action.trips) == ("call", 200, 2)
    assert action.ruling is not None and action.ruling.string_bet


def _short_allins(book: str) -> HandState:
    """Flop: 1 bets 100, 2 raises to 300, 3 all-in 400, 4 all-in 550 (both short of a full raise)."""
    stream = Stream(stacks={1: 5000, 2: 5000, 3: 500, 4: 650})
    state = HandState(table_id="t1", rulebook=load_rulebook(book))
    feed(state, stream.level(50, 100), stream.button(4), stream.seat_stacks(), stream.shuffle(),
         stream.push(1, 50), stream.push(2, 100), stream.deal([1, 2, 3, 4]),
         stream.push(3, 100), stream.push(4, 100), stream.push(1, 50), stream.tap(2),
         stream.board("2H", "3H", "4H"),
         stream.push(1, 100), stream.push(2, 100, 100, 100), stream.push(3, *[100] * 4), stream.push(4, *[25] * 22))
    state.flush()
    return state


def test_short_allin_000_9_13_not_doubled_cannot_reraise() -> None:
    state = _short_allins("club_000")
    assert state.all_in_seats == (3, 4) and state.facing_bet_to == 550
    assert state.actor == 1
    assert not state.may_raise(2)  # 300 not doubled by 550
    assert state.may_raise(1)  # 100 doubled


def test_short_allin_tda_full_raise_in_total_reopens() -> None:
    state = _short_allins("tda2024")
    assert state.may_raise(2)  # 550 - 300 = 250 >= the last full raise (200)
    assert state.last_full_raise == 200


def test_heads_up_small_blind_is_the_button_ggc_7_11() -> None:
    stream = Stream(stacks={3: 4000, 7: 4000})
    state = HandState(table_id="t1", rulebook=load_rulebook("ggc"))
    feed(state, stream.level(100, 200), stream.button(7), stream.seat_stacks(), stream.shuffle(),
         stream.push(7, 100), stream.push(3, 200), stream.deal([3, 7]))
    assert [(a.seat, a.kind) for a in state.log] == [(7, "post_small_blind"), (3, "post_big_blind")]
    assert state.actor == 7
    feed(state, stream.push(7, 100))
    state.flush()
    feed(state, stream.tap(3), stream.board("2C", "9D", "QS"))
    assert state.actor == 3  # after the flop the big blind acts first


def test_declared_raise_to_is_used_by_the_ruling() -> None:
    state, stream = four_handed()
    feed(state, stream.declare(4, "raise_to", 900), stream.push(4, 500, 100, 100))
    (action,) = state.flush()
    assert (action.kind, action.total_to) == ("raise", 900)
    assert action.ruling is not None and action.ruling.chips_to_add == 200


def test_next_shuffle_starts_a_new_hand() -> None:
    state, stream = four_handed()
    feed(state, stream.push(4, 200), stream.shuffle())
    assert state.hand == 2 and state.log[-1].kind == "call"
    assert state.street is Street.PREFLOP and state.pot == 0


def test_events_that_make_no_sense_are_counted_not_raised() -> None:
    stream = Stream(stacks={1: 1000, 2: 1000})
    state = HandState(table_id="t1", rulebook=load_rulebook("tda2024"))
    feed(state, stream.seat_stacks(), stream.push(1, 100), stream.tap(2))
    assert state.ignored == 1 and state.log == []
    snapshot = state.snapshot()
    assert snapshot.street is Street.WAITING and snapshot.actor is None


def test_out_of_turn_action_leaves_the_turn_where_it_was() -> None:
    state, stream = four_handed()
    feed(state, stream.push(1, 200))  # seat 1 calls out of turn; seat 4 still has the action
    state.flush()
    assert state.actor == 4 and state.log[-1].seat == 1 and state.log[-1].out_of_turn
    feed(state, stream.push(4, 200))
    state.flush()
    assert not state.log[-1].out_of_turn and state.actor == 2


def test_premature_flop_opens_once_the_round_is_over_003_2_13() -> None:
    state, stream = four_handed()
    feed(state, stream.push(4, 200), stream.push(1, 200), stream.push(2, 100))
    feed(state, stream.board("2C"))
    assert state.card_while_round_open and state.street is Street.PREFLOP and state.actor == 3
    feed(state, stream.tap(3))
    assert state.street is Street.FLOP and state.actor == 2 and state.board == ["2C"]


def test_hole_cards_are_a_fold_only_once_in_the_muck() -> None:
    state, stream = four_handed()
    feed(state, stream.lift(4, hold=2.0))  # a peek: the cards come back
    assert state.seats_in_hand == (1, 2, 3, 4) and state.actor == 4 and not state.lifted
    feed(state, stream.fold(4))
    assert state.seats_in_hand == (1, 2, 3) and state.log[-1].kind == "fold" and state.last_folder == 4
