"""Betting checks from the acts the camera sees: A1, A3, A4, A11, B1, C1, C2, each with a look-alike."""

from __future__ import annotations

from floorman.core.events import EventBase
from floorman.core.rule_ids import RuleId
from floorman.rules.checker import TableChecker
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
