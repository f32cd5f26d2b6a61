"""How close the edge's event derivation gets to a scenario's truth: truth frames -> edge derivation -> events.

`derive_events` runs `floorman.edge.derive.EventDeriver` on a scenario's `frames.jsonl` (the `TableState` a
perfect perception would build). The events no camera can derive come from their own feeds in a real room,
so `with_feeds` merges them from the truth by time: `blinds_level` (the tournament clock) and `declaration`
(the floor keypad). `oracle=("tap", "shuffle")` takes the events of those types from the truth instead of the
derivation (`with_oracle`), to measure what the rest of the derivation gets right when they are known.

`compare_events` matches derived events to truth events of the same type and key (zone, seat, content) within
`tolerance_s`; `evaluate_scenario` also feeds the derived stream to the rules checker and scores its alerts
against the expected alerts, as `floorman rules check-truth` does for the truth stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.alerts import ExpectedAlert
from floorman.core.errors import ConfigError
from floorman.core.events import EVENT_ADAPTER, EventBase
from floorman.core.layout import TableLayout
from floorman.core.table_state import TableState
from floorman.datasets.scenario import FPS, load_scenario
from floorman.datasets.truth import FRAMES_FILE, TRUTH_FILE, FrameTruth, read_frames, read_truth
from floorman.edge.agent import DEFAULT_MODEL, PerceptionConfig, ViewConfig, build_state_builder, load_layout
from floorman.edge.builders import ViewsStateBuilder
from floorman.edge.derive import DeriveConfig, EventDeriver
from floorman.evaluation.states import cached_states, header_for, stale_header
from floorman.rules.rulebook import load_rulebook
from floorman.rules.truth_check import TruthReport, replay, score

FEEDS = ("blinds_level", "declaration")
NOT_DERIVED = ("tap", "heartbeat")


def derive_events(frames: Iterable[FrameTruth | TableState], *, layout: TableLayout, table_id: str = "sim",
                  camera_id: str = "sim", config: DeriveConfig | None = None) -> list[EventBase]:
    """The derivation's events on truth frames (or table states), numbered 0, 1, 2, ..."""
    deriver = EventDeriver(layout, table_id=table_id, camera_id=camera_id, config=config)
    events: list[EventBase] = []
    for frame in frames:
        state = frame if isinstance(frame, TableState) else frame.table_state(camera_id=camera_id)
        events.extend(deriver.update(state))
    return renumber(events)


def vision_states(folder: Path, *, layout_name: str, calibration: Path, model: Path | None = None,
                  camera_id: str = "sim", views: Sequence[tuple[Path, Path]] = ()) -> Iterator[TableState]:
    """The edge's vision (`build_state_builder`: gated detector, recognisers, tracker) on each frame of the
    folder's video.mp4, with the calibration file given (`floorman calibrate DIR/calibration.png`). `views`: the
    same scenario rendered from other cameras (each folder with its calibration file), read in step and fused as
    `floorman edge --view` fuses them (`FusedStateBuilder`)."""
    builder = build_state_builder(
        PerceptionConfig(camera_id=camera_id, calibration=calibration, model=model), layout=load_layout(layout_name),
        views=[ViewConfig(source=str(other / "video.mp4"), calibration=calib) for other, calib in views])
    captures = []
    try:
        for video in [folder / "video.mp4", *(other / "video.mp4" for other, _ in views)]:
            capture = cv2.VideoCapture(str(video))
            captures.append(capture)
            if not capture.isOpened():
                raise ConfigError(f"cannot read the video {video}", field="video.mp4")
        frame_no = 0
        while True:
            images: list[npt.NDArray[np.uint8]] = []
            for capture in captures:
                ok, image = capture.read()
                if not ok:
                    return
                images.append(np.ascontiguousarray(image, dtype=np.uint8))
            if isinstance(builder, ViewsStateBuilder) and views:
                yield builder.build_views(images, frame_no, frame_no / FPS)
            else:
                yield builder.build(images[0], frame_no, frame_no / FPS)
            frame_no += 1
    finally:
        for capture in captures:
            capture.release()


def renumber(events: Iterable[EventBase]) -> list[EventBase]:
    return [EVENT_ADAPTER.validate_python(e.model_copy(update={"seq": i})) for i, e in enumerate(events)]


def with_feeds(derived: Sequence[EventBase], truth: Sequence[EventBase], *,
               kinds: Sequence[str] = FEEDS) -> list[EventBase]:
    """`derived` with the truth events of `kinds` merged in by time (a fed event goes before a derived one
    of the same time), renumbered."""
    fed = [e for e in truth if e.model_dump().get("type") in kinds]
    merged = sorted([(e.t, 0, i, e) for i, e in enumerate(fed)] + [(e.t, 1, i, e) for i, e in enumerate(derived)],
                    key=lambda item: (item[0], item[1], item[2]))
    return renumber(item[3] for item in merged)


def with_oracle(derived: Sequence[EventBase], truth: Sequence[EventBase], *,
                kinds: Sequence[str]) -> list[EventBase]:
    """The feeds merged in, and the events of `kinds` taken from the truth in place of the derived ones."""
    kept = [e for e in derived if event_type(e) not in kinds]
    return with_feeds(kept, truth, kinds=(*FEEDS, *kinds))


def event_type(event: EventBase) -> str:
    return str(event.model_dump().get("type"))


_KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "zone_cards": ("zone", "face_up", "face_down"),
    "zone_chips": ("zone", "value"),
    "chips_pushed": ("seat", "trip", "value", "landed_zone"),
    "hand_zone": ("zone", "action"),
    "rail_crossing": ("direction", "seat", "value"),
    "button_moved": ("seat",),
    "card_dealt": ("to_zone", "face_up", "card"),
    "tap": ("seat",),
    "shuffle": (),
    "blinds_level": ("level",),
    "declaration": ("seat", "declaration"),
}


def event_key(event: EventBase) -> tuple[object, ...]:
    """What must agree for a derived event to match a truth event (besides the type and the time)."""
    data = event.model_dump()
    kind = str(data["type"])
    values = [data.get(name) for name in _KEY_FIELDS.get(kind, ())]
    return (kind, *(str(sorted(v) if isinstance(v, (list, tuple)) else v) for v in values))


@dataclass
class TypeScore:
    """Derived vs truth events of one type."""

    truth: int = 0
    derived: int = 0
    matched: int = 0
    delays: list[float] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return 1.0 if self.derived == 0 else self.matched / self.derived

    @property
    def recall(self) -> float:
        return 1.0 if self.truth == 0 else self.matched / self.truth

    def add(self, other: TypeScore) -> None:
        """Count `other`'s events in too (totals over scenarios)."""
        self.truth += other.truth
        self.derived += other.derived
        self.matched += other.matched
        self.delays += other.delays

    @property
    def median_delay(self) -> float:
        if not self.delays:
            return 0.0
        ordered = sorted(self.delays)
        return ordered[len(ordered) // 2]


def compare_events(derived: Sequence[EventBase], truth: Sequence[EventBase], *,
                   tolerance_s: float = 1.0) -> dict[str, TypeScore]:
    """Per event type: how many truth events a derived event of the same key matches within `tolerance_s`."""
    scores: dict[str, TypeScore] = {}
    free: dict[tuple[object, ...], list[EventBase]] = {}
    for event in truth:
        scores.setdefault(event_type(event), TypeScore()).truth += 1
        free.setdefault(event_key(event), []).append(event)
    for event in derived:
        score_ = scores.setdefault(event_type(event), TypeScore())
        score_.derived += 1
        candidates = free.get(event_key(event), [])
        best = min(candidates, key=lambda c: abs(c.t - event.t), default=None)
        if best is not None and abs(best.t - event.t) <= tolerance_s:
            candidates.remove(best)
            score_.matched += 1
            score_.delays.append(event.t - best.t)
    return dict(sorted(scores.items()))


@dataclass
class NameScore:
    """Face-up cards dealt in the truth, each matched to a derived face-up card dealt to the same zone within the
    tolerance (the nearest in time, each used once): named right, named wrong, dealt unread, or not derived."""

    right: int = 0
    wrong: int = 0
    unread: int = 0
    missed: int = 0
    misread: list[str] = field(default_factory=list)  # "truth -> read" for each wrong one

    @property
    def truth(self) -> int:
        return self.right + self.wrong + self.unread + self.missed

    def add(self, other: NameScore) -> None:
        self.right += other.right
        self.wrong += other.wrong
        self.unread += other.unread
        self.missed += other.missed
        self.misread += other.misread


def compare_names(derived: Sequence[EventBase], truth: Sequence[EventBase], *,
                  tolerance_s: float = 1.0) -> NameScore:
    """How the face-up cards dealt in the truth were named by the derivation (`NameScore`): the card a deal names
    is matched by time and zone alone, so a card named wrong still counts as dealt here (unlike `compare_events`,
    whose key holds the name). Deals named right are paired first, each with the nearest in time of those naming
    it: two cards turned together, one named and the other not yet, count as one right and one unread, whichever
    came first (paired by time alone, the truth's first card took the other's name and counted wrong)."""
    def face_up_deals(events: Sequence[EventBase]) -> list[dict[str, Any]]:
        return [d for e in events if (d := e.model_dump())["type"] == "card_dealt" and d["face_up"]]

    def near(dealt: dict[str, Any], *, named: bool) -> list[dict[str, Any]]:
        return [d for d in free if d["to_zone"] == dealt["to_zone"] and abs(d["t"] - dealt["t"]) <= tolerance_s
                and (not named or d["card"] == dealt["card"])]

    free = face_up_deals(derived)
    names = NameScore()
    unpaired = []
    for dealt in face_up_deals(truth):
        if same := near(dealt, named=True):
            free.remove(min(same, key=lambda d: abs(d["t"] - dealt["t"])))
            names.right += 1
        else:
            unpaired.append(dealt)
    for dealt in unpaired:
        if not (candidates := near(dealt, named=False)):
            names.missed += 1
            continue
        best = min(candidates, key=lambda d: abs(d["t"] - dealt["t"]))
        free.remove(best)
        if best["card"] is None:
            names.unread += 1
        else:
            names.wrong += 1
            names.misread.append(f"{dealt['card']} -> {best['card']}")
    return names


@dataclass(frozen=True)
class ScenarioScore:
    """One scenario: event-level scores by type, and the alerts of the derived stream against the expected."""

    name: str
    frames: int
    events: dict[str, TypeScore]
    alerts: TruthReport
    truth_alerts: TruthReport
    names: NameScore = field(default_factory=NameScore)


def evaluate_scenario(folder: Path, *, config: DeriveConfig | None = None, oracle: Sequence[str] = (),
                      tolerance_s: float = 1.0, calibration: Path | None = None,
                      model: Path | None = None, states: str | None = None,
                      stale_states: bool = False, rulebook: str | None = None,
                      views: Sequence[tuple[Path, Path]] = ()) -> ScenarioScore:
    """Derive the events of a rendered scenario folder (frames.jsonl, truth.jsonl, scenario.yaml) and score them.
    With a `calibration`, the table states come from the edge's vision (detector `model`, default the shipped
    INT8 one) on video.mp4 instead of frames.jsonl; with `states` too, they are kept in (and, when made from the
    same video, detector, calibration and vision code, read back from) the file of that name in the folder;
    `stale_states` reads that file back whatever detector, calibration or vision code made it (same video).
    `rulebook` (a shipped id or a YAML path) checks the events under that rulebook instead of the scenario's own:
    the expected alerts are then those of the scenario whose rule it checks (what a club with that rulebook would
    be told; its other checks may raise alerts the scenario expects none of, which count as false). `views`: the
    scenario rendered from other cameras too (folder, calibration file), fused with the first (`vision_states`;
    with `states`, the fused states are kept, their header naming every camera's video and calibration)."""
    loaded = load_scenario(folder / "scenario.yaml")
    frames = read_frames(folder / FRAMES_FILE)
    records = read_truth(folder / TRUTH_FILE)
    truth = [r for r in records if not isinstance(r, ExpectedAlert)]
    expected = [r for r in records if isinstance(r, ExpectedAlert)]
    table_id = truth[0].table_id if truth else "sim"
    source: Iterable[FrameTruth | TableState] = frames
    if views and calibration is None:
        raise ConfigError("other cameras' views need vision (a calibration)", field="--view")
    if calibration is not None:
        source = vision_states(folder, layout_name=loaded.spec.layout, calibration=calibration, model=model,
                               views=views)
        if states is not None:
            header = header_for(folder / "video.mp4", model=model or DEFAULT_MODEL, calibration=calibration,
                                views=[(other / "video.mp4", calib) for other, calib in views])
            if stale_states:
                header = stale_header(folder / states, expected=header) or header
            source = cached_states(folder / states, header=header, make=source)
    derived = derive_events(source, layout=loaded.layout, table_id=table_id, config=config)
    stream = with_oracle(derived, truth, kinds=oracle)
    book = load_rulebook(rulebook or loaded.spec.rulebook)
    if rulebook is not None:
        checked = set(book.enabled_rules())
        expected = [e for e in expected if e.rule in checked]
    raised, count = replay(stream, rulebook=book)
    truth_raised, truth_count = replay(truth, rulebook=book)
    comparable = [e for e in truth if event_type(e) not in (*FEEDS, *oracle)]
    return ScenarioScore(
        name=loaded.spec.name, frames=len(frames),
        events=compare_events(derived, comparable, tolerance_s=tolerance_s),
        names=compare_names(derived, comparable, tolerance_s=tolerance_s),
        alerts=score(raised, expected, rulebook=book.id, events=count),
        truth_alerts=score(truth_raised, expected, rulebook=book.id, events=truth_count))
