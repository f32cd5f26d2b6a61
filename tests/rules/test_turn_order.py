"""Whose turn it is when the chips were read unsure: until each seat has acted once on a street, the order of play does
not rest on the amounts, so a seat that has shown nothing yet surely still owes an action (C1, E2). Its look-alikes
(an action the camera may have missed, a bet read a chip more, an order that itself rests on the amounts) must not
flag."""

from __future__ import annotations

from floorman.core.events import EventBase, HandZone
from floorman.rules.checker import TableChecker
from floorman.rules.rulebook import load_rulebook
from tests.rules.checking import raised, run, table
from tests.rules.factories import Stream

UNSURE = 0.3  # a push's chips read this sure are below the rules' 0.8 (`ledger_min_confidence`)


def test_a_flop_before_the_big_blind_acted_is_premature_whatever_the_chips_read() -> None:
    """003 2-13: seats 4 and 1 raise and call, seat 2 folds, the flop comes; seat 3 (big blind) had shown nothing."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 600, confidence=UNSURE, leave=True),
                 stream.push(1, 600, confidence=UNSURE, leave=True), stream.fold(2), stream.board("2C", "7D", "KH"))
    assert raised(alerts) == [("E2", None)]
    (alert,) = alerts
    assert "seat 3" in alert.explanation.en


def test_a_push_before_the_first_seat_acted_is_out_of_turn_whatever_the_chips_read() -> None:
    """Seat 1 pushes while seat 4, first to act preflop, has shown nothing: C1 once seat 4 acts (the push is
    complete), though no amount was read sure."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(1, 600, confidence=UNSURE, leave=True),
                 stream.push(4, 600, confidence=UNSURE, leave=True))
    assert raised(alerts) == [("C1", 1)]
    assert checker.state.log[-2].skipped == 4 and checker.state.log[-1].skipped is None


def test_a_fold_before_the_first_seat_on_the_flop_is_out_of_turn_whatever_the_chips_read() -> None:
    checker, stream, start = table("ggc")
    run(checker, start, stream.push(4, 200, confidence=UNSURE, leave=True), stream.fold(1), stream.fold(2),
        stream.tap(3), stream.gather(), stream.board("2C", "7D", "KH"))
    assert checker.state.street.value == "flop" and checker.state.owed_whatever_amounts == 3
    alerts = run(checker, stream.fold(4))
    assert raised(alerts) == [("C1", 4)]


def test_in_turn_actions_read_unsure_flag_nothing() -> None:
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 600, confidence=UNSURE, leave=True),
                 stream.push(1, 600, confidence=UNSURE, leave=True), stream.fold(2),
                 stream.push(3, 400, confidence=UNSURE, leave=True), stream.board("2C", "7D", "KH"),
                 stream.tap(3), stream.tap(4), stream.tap(1), stream.board("9S"))
    assert raised(alerts) == []


def test_a_seat_whose_hand_came_to_its_cards_may_have_tapped_unseen() -> None:
    """Seat 4's hand was on its cards (the edge did not call it a tap): it may have checked, so neither seat 1's
    push nor the flop proves it still owed an action."""
    checker, stream, start = table("ggc")
    hand: list[EventBase] = [HandZone(table_id="t1", seq=stream.seq, t=stream.t, frame=0, zone="hole_4", seat=4,
                                      action="enter")]
    stream.seq += 1
    alerts = run(checker, start, hand, stream.push(1, 600, confidence=UNSURE, leave=True),
                 stream.push(2, 500, confidence=UNSURE, leave=True), stream.tap(3), stream.board("2C", "7D", "KH"))
    assert raised(alerts) == []


def test_chips_read_one_more_on_a_second_look_are_no_push_out_of_turn() -> None:
    """A bet zone read one chip more while its seat's hand went by (to its stack, to its cards) reads as a push; with
    no hand of the seat leaving its bet zone it proves no action out of turn (clean_hand_02: a card protector)."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(2, 100, confidence=UNSURE), stream.push(4, 600, confidence=UNSURE,
                                                                                      leave=True))
    assert raised(alerts) == []


def test_a_push_while_the_blinds_are_owed_puts_the_order_in_doubt() -> None:
    """Seat 4 pushes before the big blind is in: the blinds were placed on other seats than the ones posting (a stack
    read empty at the shuffle, clean_hand_03), so the order of play is only the amounts' reading: nothing is flagged
    on it."""
    checker = TableChecker(table_id="t1", rulebook=load_rulebook("ggc"))
    stream = Stream(stacks=dict.fromkeys((1, 2, 3, 4), 10_000))
    alerts = run(checker, stream.level(100, 200), stream.button(1), stream.seat_stacks(), stream.shuffle(),
                 stream.push(2, 100), stream.push(4, 200, confidence=UNSURE, leave=True), stream.push(3, 200),
                 stream.deal([2, 3, 4, 1]), stream.push(1, 600, confidence=UNSURE, leave=True),
                 stream.board("2C", "7D", "KH"))
    assert checker.state.owed_whatever_amounts is None
    assert raised(alerts) == []


def test_a_card_while_only_unsure_amounts_keep_the_round_open_opens_its_street() -> None:
    """Every seat had acted when the flop came; by the amounts, read unsure, seats 4 and 1 still owed chips (seat
    3's push read as a raise). The dealer, who saw the bets, is right: the flop opens at once (premature_board_03,
    from video: the small blind's completion read as a raise kept the preflop round open through the flop), and its
    order is sure again: seat 4 folding before seat 3 acted is out of turn."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 600, confidence=UNSURE, leave=True),
                 stream.push(1, 600, confidence=UNSURE, leave=True), stream.fold(2),
                 stream.push(3, 1200, confidence=UNSURE, leave=True), stream.board("2C", "7D", "KH"))
    assert raised(alerts) == []
    assert checker.state.street.value == "flop" and checker.state.owed_whatever_amounts == 3
    assert raised(run(checker, stream.fold(4))) == [("C1", 4)]


def test_a_street_opened_when_the_amounts_said_so_has_no_sure_order() -> None:
    """The flop came while seat 3 surely owed an action (E2): its street opens once the round is over, a moment only
    the amounts tell. Seat 4's fold after that proves no skipped seat."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 600, confidence=UNSURE, leave=True),
                 stream.push(1, 600, confidence=UNSURE, leave=True), stream.fold(2), stream.board("2C", "7D", "KH"),
                 stream.push(3, 400, confidence=UNSURE, leave=True), stream.fold(4))
    assert checker.state.street.value == "flop" and checker.state.owed_whatever_amounts is None
    assert raised(alerts) == [("E2", None)]


def test_a_tap_out_of_turn_is_an_action_however_unsure_its_chips() -> None:
    """A tap's confidence says how sure it is that none of the seat's chips moved while its hand rested on its cards
    (a check, not a push): check or not, the seat acted, before seat 3 (out_of_turn_03, from video: 0.06)."""
    checker, stream, start = table("ggc")
    run(checker, start, stream.push(4, 200, confidence=UNSURE, leave=True), stream.fold(1), stream.push(2, 100),
        stream.tap(3), stream.gather(), stream.board("2C", "7D", "KH"))
    tap = [e.model_copy(update={"confidence": 0.06}) for e in stream.tap(4)]
    assert raised(run(checker, tap)) == [("C1", 4)]


def test_a_seat_whose_hand_came_onto_the_table_may_have_tapped_unseen() -> None:
    """Dev clean_hand_01 from video: a check on the turn was missed, and the only event of that hand was its
    coming onto the table over the rail (here seat 2). Seats 3 and 4 acting after it prove nothing skipped."""
    checker, stream, start = table("ggc")
    run(checker, start, stream.push(4, 200, confidence=UNSURE, leave=True), stream.fold(1), stream.push(2, 100),
        stream.tap(3), stream.gather(), stream.board("2C", "7D", "KH"))
    rail: list[EventBase] = [HandZone(table_id="t1", seq=stream.seq, t=stream.t, frame=0, zone="rail_edge", seat=2,
                                      action="enter", holding="chips")]
    stream.seq += 1
    alerts = run(checker, rail, stream.tap(3), stream.push(4, 400, confidence=UNSURE, leave=True))
    assert raised(alerts) == []


def test_a_seat_not_seen_dealt_in_has_no_known_place_in_the_order() -> None:
    """Tilted clean_hand_01 from video: seat 3's hole cards were not seen dealt, so its tap on the turn cannot say
    it went before seat 5 (the first seat seen dealt in)."""
    checker = TableChecker(table_id="t1", rulebook=load_rulebook("ggc"))
    stream = Stream(stacks=dict.fromkeys((1, 2, 3, 4), 10_000))
    alerts = run(checker, stream.level(100, 200), stream.button(1), stream.seat_stacks(), stream.shuffle(),
                 stream.push(2, 100), stream.push(3, 200), stream.deal([2, 4, 1]),
                 stream.push(4, 200, confidence=UNSURE, leave=True), stream.push(1, 200, confidence=UNSURE, leave=True),
                 stream.push(2, 100, confidence=UNSURE, leave=True), stream.tap(3), stream.gather(),
                 stream.board("2C", "7D", "KH"), stream.tap(3))
    assert checker.state.owed_whatever_amounts == 2
    assert raised(alerts) == []


def test_a_seat_whose_stack_is_read_empty_owes_nothing() -> None:
    """Seat 4 pushed its whole stack preflop while its stack was half covered (so not ruled all-in): its stack zone
    read empty afterwards says it is all-in, and it owes no action on the flop, whatever was ruled."""
    checker = TableChecker(table_id="t1", rulebook=load_rulebook("ggc"))
    stream = Stream(stacks={1: 10_000, 2: 10_000, 3: 10_000, 4: 1000})
    run(checker, stream.level(100, 200), stream.button(1), stream.seat_stacks(), stream.shuffle(),
        stream.push(2, 100), stream.push(3, 200), stream.deal([2, 3, 4, 1]))
    covered = [e.model_copy(update={"visible_fraction": 0.5}) if e.type == "zone_chips" else e
               for e in stream.push(4, 1000, confidence=UNSURE, leave=True)]  # its stack unseen as it went
    alerts = run(checker, covered, stream.push(1, 1000, confidence=UNSURE, leave=True), stream.fold(2),
                 stream.push(3, 800, confidence=UNSURE, leave=True), stream.gather(), stream.seat_stacks(),
                 stream.board("2C", "7D", "KH"), stream.tap(3), stream.tap(1), stream.board("9S"))
    assert checker.state.street.value == "turn" and checker.state.owed_whatever_amounts == 3
    assert [r for r in raised(alerts) if r[0] in ("C1", "E2")] == []


def test_a_premature_flop_without_a_burn_names_the_seat_that_owed() -> None:
    """The first board card itself is premature (no burn before it): the seat named is the one that owed, as it
    stood when the card came (the street is deferred after it)."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 600, confidence=UNSURE, leave=True),
                 stream.push(1, 600, confidence=UNSURE, leave=True), stream.fold(2),
                 stream.card("board", card="2C"), stream.card("board", card="7D"), stream.card("board", card="KH"))
    (alert,) = [a for a in alerts if a.rule.value == "E2"]
    assert "seat 3 still owes" in alert.explanation.en
