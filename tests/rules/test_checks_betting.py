"""Betting checks from the acts the camera sees: A1, A2, A3, A4, A11, B1, C1, C2, each with a look-alike."""

from __future__ import annotations

import pytest

from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.checker import TableChecker
from floorman.rules.rulebook import load_rulebook
from tests.rules.checking import raised, rules_of, run, table
from tests.rules.factories import Stream


def _flop(book: str) -> tuple[TableChecker, Stream, list[EventBase]]:
    """Everyone calls 200 pre-flop, the flop is dealt; seat 2 acts first."""
    checker, stream, start = table(book)
    events = [*start, *stream.push(4, 200), *stream.push(1, 200), *stream.push(2, 100), *stream.tap(3),
              *stream.gather(), *stream.board("2C", "7D", "KH")]
    return checker, stream, events


def test_min_opening_bet_000_9_5() -> None:
    checker, stream, start = table("club_000")
    alerts = run(checker, start, stream.push(4, 200), stream.push(1, 200), stream.push(2, 100), stream.tap(3),
                 stream.gather(), stream.board("2C", "7D", "KH"), stream.push(2, 100, 25), stream.tap(3))
    (alert,) = rules_of(alerts, RuleId.MIN_OPENING_BET)
    assert alert.seat == 2 and any(c.rule == "9-5" for c in alert.citations)
    assert "completed" in alert.explanation.en


def test_min_opening_bet_an_all_in_below_the_big_blind_is_not_flagged() -> None:
    checker, stream, start = table("club_000", stack=400)
    alerts = run(checker, start, stream.push(4, 200), stream.push(1, 200), stream.push(2, 100), stream.tap(3),
                 stream.gather(), stream.board("2C", "7D", "KH"), stream.push(2, 100, 100), stream.tap(3))
    assert rules_of(alerts, RuleId.MIN_OPENING_BET) == []


def test_min_raise_003_8_8_double_the_previous_bet() -> None:
    """GGC: open 100... here BB 200, raise to 600, a re-raise must reach 1200 (double); 1000 is short."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 500, 100), stream.push(1, 500, 500), stream.tap(2))
    (alert,) = rules_of(alerts, RuleId.MIN_RAISE)
    assert alert.seat == 1 and alert.provisional and any(c.rule == "8-8" for c in alert.citations)
    assert "1200" in alert.explanation.en


def test_min_raise_after_a_push_read_unsure_in_the_hand_accuses_no_one() -> None:
    """The same short re-raise, but an earlier push of the hand was read below ledger_min_confidence: the hand's
    amounts (and so the facing bet) are unsure, no betting ruling is raised on them."""
    checker, stream, start = table("ggc")
    unsure = [e.model_copy(update={"confidence": 0.5}) if e.type == "chips_pushed" else e
              for e in stream.push(4, 500, 100)]
    alerts = run(checker, start, unsure, stream.push(1, 500, 500), stream.tap(2))
    assert rules_of(alerts, RuleId.MIN_RAISE) == []
    assert checker.state.chip_doubt == 0.5


def test_min_raise_004_9_8_same_push_is_a_legal_reraise() -> None:
    """004: previous total plus the increment (600 + 400 = 1000): the same 1000 is legal."""
    checker, stream, start = table("club_004")
    alerts = run(checker, start, stream.push(4, 500, 100), stream.push(1, 500, 500), stream.tap(2))
    assert raised(alerts) == []


def test_short_allin_reraise_000_9_13() -> None:
    """Flop: 1 bets 100... seat 2 bets 200, 3 all-in 300 (short, not doubled), 4 calls, 2 may not re-raise."""
    checker, stream, start = table("club_000", stack=2000)
    stream.stacks[3] = 300  # after the pre-flop 200, 300 left
    alerts = run(checker, start, stream.seat_stacks()[2:3], stream.push(4, 200), stream.push(1, 200),
                 stream.push(2, 100), stream.tap(3), stream.gather(), stream.board("2C", "7D", "KH"),
                 stream.push(2, 200), stream.push(3, 100, 100, 100), stream.push(4, 100, 100, 100),
                 stream.tap(1), stream.push(2, 500, 100, 100, 100, 100))
    (alert,) = rules_of(alerts, RuleId.SHORT_ALLIN_RERAISE)
    assert alert.seat == 2 and any(c.rule == "9-13" for c in alert.citations)


def test_short_allin_reraise_a_player_who_had_not_acted_may_raise() -> None:
    checker, stream, start = table("club_000", stack=2000)
    stream.stacks[3] = 300
    alerts = run(checker, start, stream.seat_stacks()[2:3], stream.push(4, 200), stream.push(1, 200),
                 stream.push(2, 100), stream.tap(3), stream.gather(), stream.board("2C", "7D", "KH"),
                 stream.push(2, 200), stream.push(3, 100, 100, 100), stream.push(4, 500, 100, 100))
    assert rules_of(alerts, RuleId.SHORT_ALLIN_RERAISE) == []


def test_under_call_004_9_9() -> None:
    checker, stream, start = table("club_004")
    alerts = run(checker, start, stream.push(4, 500, 100), stream.push(1, 100, 100, 100), stream.tap(2))
    (alert,) = rules_of(alerts, RuleId.UNDER_CALL)
    assert alert.seat == 1 and any(c.rule == "9-9" for c in alert.citations)


def test_under_call_a_short_all_in_call_is_not_flagged() -> None:
    checker, stream, start = table("club_004", stack=500)
    alerts = run(checker, start, stream.push(4, 500), stream.push(1, 100, 100, 100, 100, 100), stream.tap(2))
    assert rules_of(alerts, RuleId.UNDER_CALL) == []


def test_splashing_pot_000_9_12() -> None:
    checker, stream, start = _flop("club_000")
    alerts = run(checker, start, stream.push(2, 500, splash=True))
    (alert,) = rules_of(alerts, RuleId.SPLASHING_POT)
    assert alert.seat == 2 and any(c.rule == "9-12" for c in alert.citations)
    assert alert.sanction is not None and "avertissement" in alert.sanction.lower()


def test_splashing_pot_read_from_unsure_chip_counts_accuses_no_one() -> None:
    """A pot misread as growing right after a pick-up looks like a splash: below ledger_min_confidence, no B1."""
    for confidence, expected in ((0.6, 0), (0.85, 1)):
        checker, stream, start = _flop("club_000")
        push = [e.model_copy(update={"confidence": confidence}) if e.type == "chips_pushed" else e
                for e in stream.push(2, 500, splash=True)]
        found = rules_of(run(checker, start, push), RuleId.SPLASHING_POT)
        assert len(found) == expected and all(a.confidence == confidence for a in found)


@pytest.mark.parametrize(("landed", "expected"), [(0.9, 1), (0.6, 0), (None, 0)])
def test_a_splash_counted_sure_is_flagged_though_its_value_was_read_unsure(landed: float | None,
                                                                           expected: int) -> None:
    """B1 rests on where the chips came to rest, not on their value (chips under a top whose side is too thin to read:
    splash_02 from a tilted 4K camera); a landing read unsure, or none given (then the value's), accuses no one."""
    checker, stream, start = _flop("club_000")
    push = [e.model_copy(update={"confidence": 0.5, "landed_confidence": landed}) if e.type == "chips_pushed" else e
            for e in stream.push(2, 500, splash=True)]
    found = rules_of(run(checker, start, push), RuleId.SPLASHING_POT)
    assert len(found) == expected
    for alert in found:
        assert alert.confidence == landed and "unsure" in alert.explanation.en and "500" in alert.explanation.en


def test_splashing_pot_squaring_chips_and_a_dealer_gather_are_not_flagged() -> None:
    checker, stream, start = _flop("club_000")
    from floorman.core.events import HandZone

    square = [HandZone(table_id="t1", seq=stream.seq, t=stream.t, frame=0, zone="bet_2", seat=2, action="enter")]
    stream.seq += 1
    alerts = run(checker, start, stream.push(2, 500), square, stream.push(3, 500), stream.push(4, 500),
                 stream.push(1, 500), stream.gather())
    assert raised(alerts) == []


def test_out_of_turn_003_8_14() -> None:
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(1, 200), stream.push(4, 200))
    (alert,) = rules_of(alerts, RuleId.OUT_OF_TURN)
    assert alert.seat == 1 and any(c.rule == "8-14" for c in alert.citations)
    assert alert.sanction is not None and "erreur de jeu" in alert.sanction.lower()
    assert raised(alerts) == [("C1", 1)]  # seat 4, whose turn it still was, is not out of turn


def test_out_of_turn_000_9_14_fold_and_tap() -> None:
    checker, stream, start = _flop("club_000")
    alerts = run(checker, start, stream.fold(4), stream.tap(2), stream.tap(3))
    assert raised(alerts) == [("C1", 4)]


def test_out_of_turn_blinds_and_actions_in_order_are_not_flagged() -> None:
    checker, stream, start = _flop("club_000")
    alerts = run(checker, start, stream.tap(2), stream.push(3, 200), stream.fold(4), stream.push(1, 200),
                 stream.push(2, 200))
    assert raised(alerts) == []


def test_skipped_player_000_9_15() -> None:
    checker, stream, start = table("club_000", seats=(1, 2, 3, 4, 5, 6))
    alerts = run(checker, start, stream.push(5, 200), stream.push(6, 200), stream.push(1, 200))
    assert sorted(raised(alerts)) == [("C1", 1), ("C1", 5), ("C1", 6), ("C2", 4)]
    (alert,) = rules_of(alerts, RuleId.SKIPPED_PLAYER)
    assert any(c.rule == "9-15" for c in alert.citations)


def test_skipped_player_who_acts_after_one_out_of_turn_action_is_not_flagged() -> None:
    checker, stream, start = table("club_000", seats=(1, 2, 3, 4, 5, 6))
    alerts = run(checker, start, stream.push(5, 200), stream.push(4, 200), stream.push(6, 200))
    assert rules_of(alerts, RuleId.SKIPPED_PLAYER) == []


def test_skipped_player_ggc_has_no_such_rule() -> None:
    checker, stream, start = table("ggc", seats=(1, 2, 3, 4, 5, 6))
    alerts = run(checker, start, stream.push(5, 200), stream.push(6, 200), stream.push(1, 200))
    assert rules_of(alerts, RuleId.SKIPPED_PLAYER) == []


def test_min_raise_003_8_10_a_lone_oversized_chip_ruled_a_call_is_not_flagged() -> None:
    """GGC has no oversized-chip rule: a 500 chip from the big blind (200 in) facing 600 makes 700, below the 50%
    threshold (900): a call with change, not an under-raise."""
    checker, stream, start = table("ggc")
    alerts = run(checker, start, stream.push(4, 500, 100), stream.fold(1), stream.fold(2), stream.push(3, 500))
    assert raised(alerts) == []
    assert (checker.state.log[-1].kind, checker.state.log[-1].total_to) == ("call", 600)


def _short_stack_hand(book: str, short: int) -> tuple[TableChecker, Stream, list[EventBase]]:
    """Seats 1-4, button 1, blinds 100/200 by 2 and 3; seat 4 holds only `short`."""
    stream = Stream(stacks={1: 10_000, 2: 10_000, 3: 10_000, 4: short})
    checker = TableChecker(table_id="t1", rulebook=load_rulebook(book))
    events = [*stream.level(100, 200), *stream.button(1), *stream.seat_stacks(), *stream.shuffle(),
              *stream.push(2, 100), *stream.push(3, 200), *stream.deal([2, 3, 4, 1])]
    return checker, stream, events


def _flop_all_in_for_50(book: str) -> tuple[TableChecker, Stream, list[EventBase]]:
    """Everyone calls 200; on the flop 2 and 3 check and seat 4 is all-in for 50 (below the big blind)."""
    checker, stream, events = _short_stack_hand(book, 250)
    events += [*stream.push(4, 100, 100), *stream.push(1, 100, 100), *stream.push(2, 100), *stream.tap(3),
               *stream.gather(), *stream.board("2C", "7D", "KH"), *stream.tap(2), *stream.tap(3),
               *stream.push(4, 25, 25)]
    return checker, stream, events


@pytest.mark.parametrize("book", ["club_004", "club_000", "ggc"])
def test_allin_below_big_blind_004_9_7_raise_must_reach_all_in_plus_big_blind(book: str) -> None:
    """004 9-7 (same in 000 9-7, 003 8-7): all-in 50, BB 200: a raise goes to 250 at least; 200 is short."""
    checker, stream, events = _flop_all_in_for_50(book)
    alerts = run(checker, events, stream.push(1, 100, 100), stream.tap(2))
    (alert,) = rules_of(alerts, RuleId.ALLIN_BELOW_BIG_BLIND)
    assert alert.seat == 1 and {"9-7", "8-7"} & {c.rule for c in alert.citations}
    assert rules_of(alerts, RuleId.MIN_RAISE) == []  # one act, one alert: the specific rule


@pytest.mark.parametrize("pushed", [(25, 25), (100, 100, 25, 25)], ids=["call-50", "raise-to-250"])
def test_allin_below_big_blind_a_call_of_the_all_in_or_a_full_raise_is_not_flagged(pushed: tuple[int, ...]) -> None:
    checker, stream, events = _flop_all_in_for_50("club_004")
    alerts = run(checker, events, stream.push(1, *pushed), stream.tap(2))
    assert raised(alerts) == []


def test_allin_below_big_blind_000_9_6_preflop_the_full_big_blind_is_owed() -> None:
    """000 9-6: seat 4 all-in for 150 pre-flop; seat 1 must still call 200 (the all-in does not lower it)."""
    checker, stream, events = _short_stack_hand("club_000", 150)
    alerts = run(checker, events, stream.push(4, 100, 25, 25), stream.push(1, 100, 25, 25), stream.tap(2))
    (alert,) = rules_of(alerts, RuleId.ALLIN_BELOW_BIG_BLIND)
    assert alert.seat == 1 and "9-6" in [c.rule for c in alert.citations]


def test_allin_below_big_blind_000_9_6_calling_the_big_blind_is_not_flagged() -> None:
    checker, stream, events = _short_stack_hand("club_000", 150)
    alerts = run(checker, events, stream.push(4, 100, 25, 25), stream.push(1, 100, 100), stream.tap(2))
    assert raised(alerts) == []


def test_allin_below_big_blind_tda_keeps_the_general_rules() -> None:
    """tda2024 has no A2 in its seeds: the same under-raise stays an A3."""
    checker, stream, events = _flop_all_in_for_50("tda2024")
    alerts = run(checker, events, stream.push(1, 100, 100), stream.tap(2))
    assert raised(alerts) == [("A3", 1)]


@pytest.mark.parametrize("button_after", [2, 1], ids=["after_the_big_blind", "after_the_small_blind"])
def test_blinds_posted_before_the_button_is_seen_are_no_under_call(button_after: int) -> None:
    # From a tilted 4K camera the button was first seen 8.5 s into the hand (pocket_chips_01): the small blind,
    # ruled as if facing the big blind, was an under-call under tda2024. Before the deal a push of a blind or less
    # is a blind, whoever posts it. From the same camera the button (boxed as a stack of 25s until then) was first
    # seen 0.03 s after the small blind landed, before that push was ruled (string_bet_02): an A11 under club_004.
    stream = Stream(stacks=dict.fromkeys((1, 2, 3, 4), 10_000))
    checker = TableChecker(table_id="t1", rulebook=load_rulebook("tda2024"))
    blinds = [stream.push(2, 100), stream.push(3, 200)]
    blinds.insert(button_after, stream.button(1))
    alerts = run(checker, [*stream.level(100, 200), *stream.seat_stacks(), *stream.shuffle()], *blinds,
                 stream.deal([2, 3, 4, 1]), stream.push(4, 200), stream.push(1, 200), stream.push(2, 100))
    assert rules_of(alerts, RuleId.UNDER_CALL) == [] and rules_of(alerts, RuleId.MIN_OPENING_BET) == []
    assert raised(alerts) == []
