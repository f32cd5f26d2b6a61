"""The scenario engine: a `ScenarioSpec` becomes per-frame scenes, truth events and expected alerts.

The timeline is compiled once, action by action in time order (each action starts after the previous one
ends). Compiling keeps the logical table state (chips per zone, cards per zone, the deck), records a snapshot
of it at every frame where it changes, the motions (hand tracks, sliding cards) and the events of
docs/events.md at the frame where each change shows. `Timeline.scene_at(frame)` combines the snapshot in
force with the motions active at that frame, so any frame can be drawn on its own.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from floorman.core.alerts import ExpectedAlert
from floorman.core.cards import Card, full_deck
from floorman.core.chips import chips_value, count_chips
from floorman.core.errors import ConfigError
from floorman.core.events import BlindsLevel, ButtonMoved, EventBase, ZoneCards, ZoneChips
from floorman.core.layout import ZoneKind
from floorman.datasets.camera import Camera
from floorman.datasets.scenario import FPS, LoadedScenario, ScenarioSpec
from floorman.datasets.scenario_actions import run_action
from floorman.datasets.scenario_motion import BUTTON_ID, DECK_ID, CardSlide, HandTrack, ZoneGeometry, piles_of
from floorman.datasets.scene import (
    CardObject,
    ChipStack,
    DealerButton,
    DeckStub,
    Lighting,
    Scene,
    SurfaceKind,
    TableAppearance,
)

logger = logging.getLogger(__name__)

SORTED_KINDS = (ZoneKind.STACK, ZoneKind.POT)


@dataclass(frozen=True)
class Snapshot:
    """The resting objects from `frame` on, until the next snapshot."""

    frame: int
    piles: dict[str, tuple[tuple[int, ...], ...]]
    cards: tuple[CardObject, ...]
    deck_count: int
    button: tuple[float, float] | None


@dataclass
class TableState:
    """The logical table while compiling."""

    piles: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    cards: dict[str, list[CardObject]] = field(default_factory=dict)
    deck: list[Card] = field(default_factory=list)
    button: tuple[float, float] | None = None
    button_seat: int = 1


class Compiler:
    """Walks the timeline, keeping state and recording snapshots, motions, events and expected alerts."""

    def __init__(self, loaded: LoadedScenario) -> None:
        self.loaded = loaded
        self.spec: ScenarioSpec = loaded.spec
        self.layout = loaded.layout
        self.geo = ZoneGeometry(loaded.layout)
        self.rng = np.random.default_rng(self.spec.seed)
        self.state = TableState()
        self.snapshots: list[Snapshot] = []
        self.tracks: list[HandTrack] = []
        self.slides: list[CardSlide] = []
        self._events: list[tuple[int, int, EventBase]] = []
        self.expected: list[ExpectedAlert] = []
        self.reserved = _reserved_cards(self.spec)
        self.trip_seat: int | None = None
        self.trip_count = 0
        self.where = "timeline"

    # --- errors, ids ---------------------------------------------------------------------------------

    def error(self, message: str, *, field: str = "") -> ConfigError:
        return ConfigError(message, source=self.loaded.source, field=f"{self.where}{field}")

    def next_hand_id(self) -> int:
        return 10_000 + len(self.tracks)

    # --- state ---------------------------------------------------------------------------------------

    def zone_chips(self, zone: str) -> list[int]:
        return [chip for pile in self.state.piles.get(zone, []) for chip in pile]

    def set_zone_chips(self, zone: str, piles: list[tuple[int, ...]]) -> None:
        kind = self.layout.zone(zone).kind
        flat = [chip for pile in piles for chip in pile]
        self.state.piles[zone] = piles_of(flat) if kind in SORTED_KINDS else [p for p in piles if p]

    def add_chips(self, zone: str, chips: list[int]) -> None:
        self.set_zone_chips(zone, [*self.state.piles.get(zone, []), *piles_of(chips)])

    def take_chips(self, zone: str, chips: list[int], *, field: str) -> None:
        piles = [list(p) for p in self.state.piles.get(zone, [])]
        for chip in sorted(chips):
            for pile in reversed(piles):
                if chip in pile:
                    pile.reverse()
                    pile.remove(chip)
                    pile.reverse()
                    break
            else:
                have = count_chips(self.zone_chips(zone))
                raise self.error(f"{zone} holds {[f'{c.count}x{c.denom}' for c in have]}, cannot take "
                                 f"{[f'{c.count}x{c.denom}' for c in count_chips(chips)]}", field=field)
        self.set_zone_chips(zone, [tuple(p) for p in piles])

    def pick_amount(self, zone: str, amount: int, *, field: str) -> list[int]:
        """Chips worth `amount` from a zone: greedy, highest denomination that fits first."""
        available = sorted(self.zone_chips(zone), reverse=True)
        chosen: list[int] = []
        rest = amount
        for chip in available:
            if chip <= rest:
                chosen.append(chip)
                rest -= chip
        if rest:
            raise self.error(f"cannot make {amount} from the chips of {zone} "
                             f"({chips_value(count_chips(available))} in all)", field=field)
        return chosen

    def draw(self, wanted: str | None = None, *, field: str = "") -> Card:
        deck = self.state.deck
        if wanted is not None:
            card = Card.parse(wanted)
            if card not in deck:
                raise self.error(f"card {wanted} is not in the deck stub (already dealt this hand)", field=field)
            deck.remove(card)
            return card
        for card in deck:
            if card not in self.reserved:
                deck.remove(card)
                return card
        raise self.error("the deck stub is empty", field=field)

    def new_deck(self) -> None:
        order = self.rng.permutation(52)
        deck = full_deck()
        self.state.deck = [deck[int(i)] for i in order]

    def commit(self, frame: int) -> None:
        """Record the current state as the scene from `frame` on."""
        s = self.state
        snapshot = Snapshot(frame=frame, piles={z: tuple(p) for z, p in s.piles.items() if p},
                            cards=tuple(c for zone in s.cards.values() for c in zone),
                            deck_count=len(s.deck), button=s.button)
        if self.snapshots and self.snapshots[-1].frame > frame:
            raise self.error(f"internal: snapshot at frame {frame} before frame {self.snapshots[-1].frame}")
        if self.snapshots and self.snapshots[-1].frame == frame:
            self.snapshots[-1] = snapshot
        else:
            self.snapshots.append(snapshot)

    # --- events --------------------------------------------------------------------------------------

    def emit(self, frame: int, event: EventBase) -> None:
        self._events.append((frame, len(self._events), event))

    def base(self, frame: int) -> dict[str, object]:
        return {"table_id": self.spec.table_id, "seq": 0, "t": frame / FPS, "frame": frame}

    def emit_zone_chips(self, frame: int, zone: str, *, visible: float = 1.0) -> None:
        chips = count_chips(self.zone_chips(zone))
        seat = self.layout.zone(zone).seat
        self.emit(frame, ZoneChips.model_validate({**self.base(frame), "zone": zone, "seat": seat, "chips": chips,
                                                   "value": chips_value(chips), "visible_fraction": visible}))

    def emit_zone_cards(self, frame: int, zone: str) -> None:
        cards = self.state.cards.get(zone, [])
        seat = self.layout.zone(zone).seat
        face_up = tuple(str(c.card) for c in cards if c.face_up)
        face_down = sum(1 for c in cards if not c.face_up) + (len(self.state.deck) if zone == "deck" else 0)
        self.emit(frame, ZoneCards.model_validate({**self.base(frame), "zone": zone, "seat": seat,
                                                   "face_up": face_up, "face_down": face_down}))

    def sorted_events(self) -> list[EventBase]:
        ordered = sorted(self._events, key=lambda item: (item[0], item[1]))
        return [event.model_copy(update={"seq": seq}) for seq, (_, _, event) in enumerate(ordered)]

    def expect(self, *, rules: Sequence[tuple[str, int | None]], span: tuple[float, float], action: object,
               note: str) -> None:
        """Expected alerts: the action's explicit `expect`, else the given defaults over span + 5 s."""
        explicit = getattr(action, "expect", None)
        seat = getattr(action, "seat", None)
        if explicit is not None:
            for item in explicit:
                window = item.window or (round(span[0], 3), round(min(span[1] + 5.0, self.spec.duration), 3))
                self.expected.append(ExpectedAlert(rule=item.rule, seat=item.seat if item.seat is not None else seat,
                                                   t_start=window[0], t_end=window[1], note=item.note or note))
            return
        for rule, rule_seat in rules:
            self.expected.append(ExpectedAlert.model_validate(
                {"rule": rule, "seat": rule_seat, "t_start": round(span[0], 3),
                 "t_end": round(min(span[1] + 5.0, self.spec.duration), 3),
                 "note": note}))

    def action_started(self, seat: int | None) -> None:
        """Trips restart when another seat acts (or, with seat None, a card is dealt or bets gathered)."""
        if seat is None or seat != self.trip_seat:
            self.trip_seat = seat
            self.trip_count = 0

    # --- set-up --------------------------------------------------------------------------------------

    def start(self) -> None:
        spec = self.spec
        self.new_deck()
        for player in spec.seats:
            chips = [d for d, n in player.stack.items() for _ in range(n)]
            self.add_chips(f"stack_{player.seat}", chips)
        self.state.button_seat = spec.button
        self.state.button = self.geo.button_spot(spec.button)
        self.commit(0)
        level = spec.level
        self.emit(0, BlindsLevel.model_validate({**self.base(0), "level": level.level,
                                                 "small_blind": level.small_blind, "big_blind": level.big_blind,
                                                 "ante": level.ante}))
        self.emit(0, ButtonMoved.model_validate({**self.base(0), "seat": spec.button}))
        for seat in spec.seat_numbers:
            self.emit_zone_chips(0, f"stack_{seat}")


def _reserved_cards(spec: ScenarioSpec) -> set[Card]:
    reserved: set[Card] = set()
    for action in spec.timeline:
        cards = getattr(action, "cards", None)
        if isinstance(cards, list):
            reserved.update(Card.parse(c) for c in cards)
        elif isinstance(cards, dict):
            reserved.update(Card.parse(c) for pair in cards.values() for c in pair)
    return reserved


@dataclass(frozen=True)
class Timeline:
    """A compiled scenario: events, expected alerts, and a scene for every frame."""

    loaded: LoadedScenario
    n_frames: int
    events: tuple[EventBase, ...]
    expected: tuple[ExpectedAlert, ...]
    snapshots: tuple[Snapshot, ...]
    tracks: tuple[HandTrack, ...]
    slides: tuple[CardSlide, ...]
    geo: ZoneGeometry

    @property
    def spec(self) -> ScenarioSpec:
        return self.loaded.spec

    @property
    def fps(self) -> int:
        return FPS

    def snapshot_at(self, frame: int) -> Snapshot:
        index = bisect.bisect_right([s.frame for s in self.snapshots], frame) - 1
        return self.snapshots[max(0, index)]

    def scene_at(self, frame: int) -> Scene:
        if not 0 <= frame < self.n_frames:
            raise ValueError(f"expected a frame in 0..{self.n_frames - 1}, got {frame}")
        snap = self.snapshot_at(frame)
        scene = _base_scene(self.loaded)
        zone_index = self.geo.chip_zone_index
        for zone, piles in sorted(snap.piles.items()):
            lift = 0.6 if zone.startswith("hole_") else 0.0
            for i, pile in enumerate(piles):
                x, y = self.geo.slot(zone, i) if not zone.startswith("hole_") else self.geo.centre(zone)
                scene.chips.append(ChipStack(id=1000 + zone_index[zone] * 64 + i, x=x, y=y, chips=pile, z=lift,
                                             angle_deg=(i * 37.0) % 360))
        scene.cards.extend(snap.cards)
        if snap.deck_count > 0:
            dx, dy = self.geo.deck_spot()
            scene.decks.append(DeckStub(id=DECK_ID, x=dx, y=dy, count=snap.deck_count))
        if snap.button is not None:
            scene.buttons.append(DealerButton(id=BUTTON_ID, x=snap.button[0], y=snap.button[1]))
        for slide in self.slides:
            if slide.f0 <= frame < slide.f1:
                scene.cards.append(slide.object(frame))
        for track in self.tracks:
            if track.f0 <= frame <= track.f1:
                hand, chips, cards, buttons = track.objects(frame)
                scene.hands.append(hand)
                scene.chips.extend(chips)
                scene.cards.extend(cards)
                scene.buttons.extend(buttons)
        return scene

    def camera(self, size: tuple[int, int] | None = None) -> Camera:
        return scenario_camera(self.spec, size=size)


def scenario_camera(spec: ScenarioSpec, *, size: tuple[int, int] | None = None) -> Camera:
    """The scenario's fixed camera (its preset, overridden by eye/target/hfov), at `size` if given."""
    cam = spec.camera
    width, height = size or cam.size
    if cam.preset == "overhead":
        eye, target, hfov = (0.0, 0.0, 1800.0), (0.0, 0.0, 0.0), 76.0
        # Keep the whole table (2640 x 1440 mm with the rail) in view whatever the aspect ratio.
        needed = max(2760.0, 1560.0 * width / height)
        hfov = math.degrees(2 * math.atan(needed / 2 / eye[2]))
    else:
        eye, target, hfov = (0.0, -1500.0, 1250.0), (0.0, -30.0, 0.0), 74.0
    return Camera.look_at(eye=cam.eye or eye, target=cam.target or target, size=(width, height),
                          hfov_deg=cam.hfov_deg or hfov)


def _base_scene(loaded: LoadedScenario) -> Scene:
    from floorman.core.chips import parse_hex_colour

    a = loaded.spec.appearance
    l_ = loaded.spec.lighting
    appearance = TableAppearance(surface=SurfaceKind(a.surface), colour=parse_hex_colour(a.colour),
                                 texture_seed=a.texture_seed, bet_line_colour=parse_hex_colour(a.bet_line_colour),
                                 bet_line_visible=a.bet_line_visible, rail_colour=parse_hex_colour(a.rail_colour),
                                 logo=a.logo)
    lighting = Lighting(colour_temperature_k=l_.colour_temperature_k, intensity=l_.intensity,
                        gradient_direction_deg=l_.gradient_direction_deg, gradient_strength=l_.gradient_strength,
                        shadow_strength=l_.shadow_strength)
    return Scene(layout=loaded.layout, chipset=loaded.chipset, appearance=appearance, lighting=lighting)


def compile_timeline(loaded: LoadedScenario) -> Timeline:
    """Compile a loaded scenario; ConfigError names the file and the timeline entry that cannot be played."""
    spec = loaded.spec
    compiler = Compiler(loaded)
    compiler.start()
    end = 0.0
    for index, action in enumerate(spec.timeline):
        compiler.where = f"timeline[{index}]"
        if action.at is not None:
            if action.at + 1e-9 < end:
                raise compiler.error(f"starts at {action.at} s, before the previous action ends ({end:.2f} s)",
                                     field=".at")
            start = action.at
        else:
            start = end + (action.after if action.after is not None else 0.5)
        end = run_action(compiler, action, start)
        if end > spec.duration + 1e-9:
            raise compiler.error(f"ends at {end:.2f} s, after the scenario's duration ({spec.duration} s)")
    n_frames = round(spec.duration * FPS)
    events = tuple(e for e in compiler.sorted_events() if e.frame < n_frames)
    logger.debug("compiled %s: %d frames, %d events", spec.name, n_frames, len(events))
    return Timeline(loaded=loaded, n_frames=n_frames, events=events, expected=tuple(compiler.expected),
                    snapshots=tuple(compiler.snapshots), tracks=tuple(compiler.tracks),
                    slides=tuple(compiler.slides), geo=compiler.geo)
