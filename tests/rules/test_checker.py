"""The checker itself: alerts carry the rulebook's data, duplicates merge, hand windows follow F7."""

from __future__ import annotations

from floorman.core.alerts import ExpectedAlert
from floorman.core.events import ChipsPushed
from floorman.core.rule_ids import RuleId
from floorman.rules.checker import RulesChecker, TableChecker
from floorman.rules.rulebook import load_rulebook
from floorman.rules.truth_check import replay, score
from tests.rules.checking import raised, run, table


def _two_hands(book: str) -> tuple[TableChecker, dict[str, float]]:
    checker, stream, start = table(book)
    marks: dict[str, float] = {}
    run(checker, start, stream.push(4, 600), stream.fold(1), stream.fold(2))
    marks["last_fold"] = stream.t - 1.0  # the muck event of the last fold
    run(checker, stream.fold(3), stream.gather(), stream.award({4: 900}), stream.wait(2))
    marks["shuffle"] = stream.t
    run(checker, stream.shuffle(), stream.wait(3))
    marks["blind"] = stream.t + 1.5  # chips_pushed of the small blind
    run(checker, stream.push(3, 100), stream.push(4, 200))
    return checker, marks


def test_retroactivity_000_11_1_closes_at_the_shuffle() -> None:
    checker, marks = _two_hands("club_000")
    first = checker.windows[1]
    assert first.ended_at is not None and first.ended_at <= marks["shuffle"]
    assert first.closed_at == marks["shuffle"] and checker.windows[2].started_at == marks["shuffle"]


def test_retroactivity_003_7_4_closes_at_the_blinds() -> None:
    checker, marks = _two_hands("ggc")
    assert checker.windows[1].closed_at == marks["blind"]
    assert checker.windows[2].closed_at is None


def test_alert_carries_severity_citations_sanction_and_window() -> None:
    checker, stream, start = table("club_000")
    (alert,) = run(checker, start, stream.rail(2, 500, direction="in"), stream.push(4, 200))
    assert (alert.rule, alert.severity.value, alert.hand_number, alert.table_id) == (RuleId.CHIPS_FROM_OUTSIDE,
                                                                                      "alert", 1, "t1")
    assert alert.citations[0].rulebook == "club_000" and alert.citations[0].text_fr
    assert alert.sanction is not None and alert.sanction.startswith("suggested, not applied")
    assert not checker.register.entries  # suggested, never applied
    assert alert.evidence.frames and alert.evidence.event_seqs
    assert "shuffle" not in alert.explanation.en  # chip integrity is not bound to a hand
    checker, stream, start = table("club_000")
    (c1,) = run(checker, start, stream.push(1, 200), stream.push(4, 200))
    assert c1.explanation.en.endswith("Open until the shuffle of the next hand.")
    assert any(c.rule == "11-1" for c in c1.citations)


def test_rules_checker_keeps_one_hand_state_per_table() -> None:
    checker = RulesChecker(rulebook=load_rulebook("club_000"))
    _, stream_a, start_a = table("club_000")
    _, stream_b, start_b = table("club_000")
    for event in start_b:
        checker.process(event.model_copy(update={"table_id": "t2"}))
    alerts = [a for event in [*start_a, *stream_a.push(1, 200)] for a in checker.process(event)]
    assert raised(alerts) == [("C1", 1)] and alerts[0].table_id == "t1"
    assert set(checker.tables) == {"t1", "t2"} and checker.tables["t2"].state.actor == 4
    del stream_b


def test_a_rulebook_turning_a_check_off_silences_it() -> None:
    checker, stream, start = table("tda2024")  # no C1, no D2 in the TDA rulebook
    assert raised(run(checker, start, stream.push(1, 200), stream.rail(2, 500, direction="in"))) == []


def test_raised_at_is_the_time_of_the_event_that_raised_it_and_scoring_uses_it() -> None:
    """A string bet is raised at its second trip, not at the first trip its evidence starts with."""
    checker, stream, start = table("club_000")
    events = [*start, *stream.push(4, 200), *stream.push(4, 200, trip=2), *stream.push(1, 400)]
    second_trip = next(e for e in events if isinstance(e, ChipsPushed) and e.trip == 2)
    (alert,) = [a for a in run(checker, events) if a.rule is RuleId.STRING_BET]
    assert alert.raised_at == second_trip.t and alert.evidence.t_start < second_trip.t
    expected = ExpectedAlert(rule=RuleId.STRING_BET, seat=4, t_start=second_trip.t, t_end=second_trip.t + 0.1)
    early = ExpectedAlert(rule=RuleId.STRING_BET, seat=4, t_start=0.0, t_end=alert.evidence.t_start)
    raised_alerts, count = replay(events, rulebook=load_rulebook("club_000"))
    assert [r.raised_at for r in raised_alerts] == [second_trip.t]
    assert score(raised_alerts, [expected], rulebook="club_000", events=count).recall == 1.0
    assert score(raised_alerts, [early], rulebook="club_000", events=count).recall == 0.0
