"""Every bundled scenario, on its perfect-perception truth: every expected alert raised, nothing else."""

from __future__ import annotations

import functools

import pytest

from floorman.datasets.scenario import bundled_scenario_names, load_scenario
from floorman.datasets.timeline import Timeline, compile_timeline
from floorman.rules.rulebook import load_rulebook
from floorman.rules.truth_check import replay, score

NAMES = bundled_scenario_names()


@functools.cache
def timeline_of(name: str) -> Timeline:
    return compile_timeline(load_scenario(name))


@pytest.mark.parametrize("name", NAMES)
def test_scenario_truth_precision_and_recall_are_one(name: str) -> None:
    timeline = timeline_of(name)
    book = load_rulebook(timeline.spec.rulebook)
    raised, count = replay(timeline.events, rulebook=book)
    report = score(raised, timeline.expected, rulebook=book.id, events=count)
    missed = [(o.expected.rule.value, o.expected.seat, o.expected.t_start) for o in report.outcomes
              if o.met_by is None]
    unexpected = [(r.alert.rule.value, r.alert.seat, r.raised_at, r.alert.explanation.en) for r in report.unexpected]
    assert (missed, unexpected) == ([], [])
    assert report.precision == report.recall == 1.0
    for outcome in report.outcomes:
        assert outcome.met_by is not None
        alert = outcome.met_by.alert
        assert alert.citations and alert.explanation.fr and alert.explanation.en
        assert alert.evidence.event_seqs and alert.evidence.t_start <= alert.evidence.t_end


def test_library_has_clean_hands_and_infractions() -> None:
    expected = [len(timeline_of(n).expected) for n in NAMES]
    assert expected.count(0) >= 3 and sum(expected) >= 18
