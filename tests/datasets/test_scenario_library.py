"""Every bundled scenario loads, plays, and produces truth that validates and matches its infractions."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from floorman.core.alerts import ExpectedAlert
from floorman.core.events import EventBase, RailCrossing, ZoneChips
from floorman.core.rule_ids import RuleId
from floorman.datasets import scenario as sp
from floorman.datasets.scenario import FPS, bundled_scenario_names, load_scenario
from floorman.datasets.timeline import Timeline, compile_timeline
from floorman.datasets.truth import read_truth, write_truth

NAMES = bundled_scenario_names()
INFRACTIONS: dict[type[sp.ActionBase], RuleId] = {
    sp.StringBet: RuleId.STRING_BET, sp.Splash: RuleId.SPLASHING_POT, sp.OutOfTurn: RuleId.OUT_OF_TURN,
    sp.PocketChips: RuleId.CHIPS_FROM_OUTSIDE, sp.RabbitHunt: RuleId.RABBIT_HUNTING,
}


def declared_alerts(spec: sp.ScenarioSpec) -> Counter[tuple[str, int | None]]:
    """The (rule, seat) pairs the spec's actions ask for, read from the spec itself."""
    wanted: Counter[tuple[str, int | None]] = Counter()
    for action in spec.timeline:
        seat = getattr(action, "seat", None)
        if action.expect is not None:
            wanted.update((e.rule.value, e.seat if e.seat is not None else seat) for e in action.expect)
        elif type(action) in INFRACTIONS:
            wanted[(INFRACTIONS[type(action)].value, seat)] += 1
        elif isinstance(action, sp.HideChips):
            rule = RuleId.HIDDEN_CHIPS if action.mode == "covered" else RuleId.CHIPS_LEAVING_TABLE
            wanted[(rule.value, seat)] += 1
        elif isinstance(action, sp.BoardFields):
            if action.premature:
                wanted[(RuleId.PREMATURE_BOARD_CARD.value, None)] += 1
            if not action.burn:
                wanted[(RuleId.BURN_CARD_ERROR.value, None)] += 1
    return wanted


@pytest.fixture(scope="module")
def timelines() -> dict[str, Timeline]:
    return {name: compile_timeline(load_scenario(name)) for name in NAMES}


def test_library_covers_clean_hands_and_every_infraction_twice(timelines: dict[str, Timeline]) -> None:
    assert len(NAMES) >= 16
    clean = [n for n, t in timelines.items() if not t.expected]
    assert len(clean) >= 3
    per_rule = Counter(a.rule for t in timelines.values() for a in t.expected)
    for rule in (RuleId.CHIPS_FROM_OUTSIDE, RuleId.STRING_BET, RuleId.RABBIT_HUNTING, RuleId.PREMATURE_BOARD_CARD,
                 RuleId.BURN_CARD_ERROR, RuleId.SPLASHING_POT, RuleId.OUT_OF_TURN, RuleId.CHIPS_LEAVING_TABLE,
                 RuleId.HIDDEN_CHIPS):
        assert per_rule[rule] >= 2, rule
    for name, timeline in timelines.items():
        assert 20 <= timeline.spec.duration <= 90, name
        assert timeline.spec.name == name


@pytest.mark.parametrize("name", NAMES)
def test_truth_validates_and_is_ordered(name: str, timelines: dict[str, Timeline], tmp_path: Path) -> None:
    timeline = timelines[name]
    path = tmp_path / "truth.jsonl"
    lines = write_truth(path, events=timeline.events, expected=timeline.expected)
    records = read_truth(path)
    assert len(records) == lines == len(timeline.events) + len(timeline.expected)
    events = [r for r in records if isinstance(r, EventBase)]
    alerts = [r for r in records if isinstance(r, ExpectedAlert)]
    assert records[: len(events)] == events  # events first, then the expected alerts
    assert [e.seq for e in events] == list(range(len(events)))
    assert all(b.t >= a.t for a, b in itertools.pairwise(events))
    assert all(e.frame == round(e.t * FPS) and e.frame < timeline.n_frames for e in events)
    assert all(0 <= a.t_start <= a.t_end <= timeline.spec.duration for a in alerts)
    assert events[0].type == "blinds_level" and events[1].type == "button_moved"


@pytest.mark.parametrize("name", NAMES)
def test_expected_alerts_match_declared_infractions(name: str, timelines: dict[str, Timeline]) -> None:
    timeline = timelines[name]
    got = Counter((a.rule.value, a.seat) for a in timeline.expected)
    assert got == declared_alerts(timeline.spec)


@pytest.mark.parametrize("name", NAMES)
def test_chips_are_conserved(name: str, timelines: dict[str, Timeline]) -> None:
    """At the end, the chips on the table equal the start plus pocket chips minus chips taken off."""
    latest: dict[str, int] = {}
    start_total = 0
    crossed = 0
    events: list[EventBase] = list(timelines[name].events)
    for event in events:
        if isinstance(event, ZoneChips):
            if event.frame == 0:
                start_total += event.value
            latest[event.zone] = event.value
        elif isinstance(event, RailCrossing):
            crossed += event.value if event.direction.value == "in" else -event.value
    assert sum(latest.values()) == start_total + crossed


@pytest.mark.parametrize("name", NAMES)
def test_scenes_have_unique_ids_and_hands_only_while_acting(name: str, timelines: dict[str, Timeline]) -> None:
    timeline = timelines[name]
    busy = set()
    for track in timeline.tracks:
        busy.update(range(track.f0, track.f1 + 1))
    for frame in range(0, timeline.n_frames, 7):
        scene = timeline.scene_at(frame)
        scene.check_ids()
        assert bool(scene.hands) == (frame in busy)
        assert all(chip.z >= 0 for chip in scene.chips)
        assert len(scene.decks) <= 1 and len(scene.buttons) <= 1
