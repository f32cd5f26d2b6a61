"""Chip recogniser on fresh rendered frames: denomination, stack count and zone value, on truth boxes and on the
detector's boxes.

    .venv/bin/python benchmarks/chips.py [--frames 60] [--seed 93001] [--size 1280x720|mixed] [--model M]
                                         [--no-detector] [--no-refine] [--no-extend] [--no-jitter] [--no-find-top]
                                         [--second-look] [--no-side-net] [--no-box-net] [--min-side-px PX]
                                         [--refine-model M]
                                         [--flat-prior]
                                         [--per-box] [--chipset CHIPSET.yaml] [--repeat] [--scene random|seats]

Each frame is a random training-style scene (`datasets.random_sample`, camera effects on) drawn from
`SeedSequence(seed, spawn_key=(i,))`; use seeds never used for anything else. `--scene seats` lays its chips out
as the scenario videos do (`seat_chips`, casino scenes): each seat's stack zone holds one stack per denomination
side by side on the scenarios' slots (touching: 42 mm apart for 39 mm chips), 1-20 chips each, and a bet of 1-6
chips alone; stacks are then also scored split touching (another stack's centre within 45 mm) / alone.
`--size mixed` draws each frame's size as `floorman datasets render` does (`random_scene.SIZES` / `SIZE_WEIGHTS`,
portrait at times, home-style scenes at 3000x2000: the issue's test set), and prints the denomination, count and
zone figures per frame-size group too (portrait frames with their landscape size). The calibration is exact (fitted
on four table points projected by the simulator's camera), as `floorman calibrate` gives on a well-marked table.
Two camera models are compared: `homography` (focal length from the calibration when the camera is tilted,
else an assumed 1400 mm camera height: what a plain calibration file gives) and `height` (the camera's measured
height above the felt given too: `floorman calibrate --camera-height`), on truth boxes and on the detector's.
Metrics, on chips at least --min-visible visible:
- top denomination: the top chip's value (what the top face shows);
- chip denomination: per chip, bottom to top, of stacks whose count is right;
- count exact, stack exact (every chip's value right), and by pixels-per-chip (how far the stack's side shows);
- count confidence: the share of stacks whose count is given >= 0.5 confidence (what the rules act on) and how
  often those counts are exact, the share given >= 0.8 (what the rules accuse on), and exactness by confidence
  band (a calibrated confidence matches it);
- stack sure: the share of stacks whose count and values (the chips under the top) are both given >= 0.8, what a
  zone the rules accuse on is made of, and how often such a stack is exact;
- top denomination without a calibration (the box alone: no count, no position);
- zone value exact: per frame and zone (stack_<s>, bet_<s>, pot) holding chips in truth or prediction, the
  value of all visible chip objects there (TableStateBuilder's zone_values) against the truth; also over the zones
  seen whole (every stack at least --min-visible in sight: none under a hand or a card or cut by the frame), over the
  zones whose stacks all have count confidence >= 0.5, and over the zones the edge trusts (every stack's count
  and values >= 0.5: `derive_chips`' sureness), and over the zones sure enough for the rules to accuse on (the
  same, >= 0.8: `ledger_min_confidence`) among those seen whole (every stack at least --min-visible in sight) where a
  stack was read, with the share of zones that qualify; and the share of the zones seen whole but read empty that
  hold chips (stacks the detector missed: an empty reading accuses no one).
Truth boxes come from the instance mask, so the recogniser is told their sides are off by rounding only
(`BOX_SIGMA_PX`); detector boxes use its default (a detector's box error: their sides are first found again in the
image, `chips_box`).
With the detector, chips are matched to truth boxes at IoU >= 0.5 and recall is printed too, and the time of one
stack read on its boxes (each box read again alone, after the frame). Counts come from the stack's silhouette
fitted to the image's edges near the box (`chips_refine`); --no-refine gives the boxes' counts alone; a detector's
box that stops short of its stack's base is run on where the side goes on past it and the count is surer for it
(`chips_extend`, session 50), --no-extend reads the boxes as they are; on frames of 2240 px and more each detector
box is read again a pixel off each way and the evidence averaged (`BOX_JITTER_PX`, session 52), --no-jitter reads it
once; a detector box cut across its stack's top disc is run on up the stack's axis to where a top disc fits
(`ChipRecogniser.find_top`, session 55; on by default since session 56), --no-find-top reads it as it is
(--find-top, session 55's flag, is the default now); --second-look has the detector look at crowded chip boxes a
second time at the frame's own pixels and give the box it finds there as each one's second box, the recogniser keeping
the surer count of the two (`OnnxDetectorConfig.refine_native_px` 90, session 57; off by default: from video it lost
an alert and made a false one); --refine-model M has another ONNX detector take the finer looks
(`OnnxDetectorConfig.refine_model`, session 58: one fine-tuned on those looks' windows, not shipped). The chips
under a top are read by the learned side reader (`ChipRecogniser.side_net`, session 59); --no-side-net reads them by
their side labels and rims' pattern as before; --min-side-px sets the thinnest side read (`MIN_SIDE_PX` by default).
Where the camera's height is assumed
(`homography` and the detector's boxes), a frame's stacks are read together and tell it
(`ChipRecogniser.read_frame`); --per-box reads each stack over all heights alike (session 6).
--repeat: how repeatable the reads are (what the edge sees of a stack at rest from video, `score_repeatability`):
each detector box read again shifted by 1 and by 2 px, with one side moved 1 px, grown 1 px, and with another stack
of the frame left out of the context that tells the camera's height (truth boxes: only the latter), alone and given
the first reading as the last one (`read_evidence(..., previous=...)`, as the table state gives it).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.core.table_state import TableState
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import ObjectTruth, Renderer, RenderResult
from floorman.datasets.render_cli import parse_size
from floorman.datasets.render_dataset import TRAINING_OPTIONS
from floorman.datasets.scene import DetectorClass, Scene
from floorman.datasets.seat_chips import seat_chips, touching
from floorman.vision.calibration import Calibration, PointPair, calibrate_from_points
from floorman.vision.chips import MIN_SIDE_PX, ChipRecogniser
from floorman.vision.chips_geometry import BOX_SIGMA_PX, TableCamera
from floorman.vision.detections import Detections
from floorman.vision.detector import Detector, Image, OnnxDetectorConfig, box_iou, create_detector
from floorman.vision.table_state import TableStateBuilder

NAMES = {c.value: c.label for c in DetectorClass}
SEAT_ZONES = ("stack_", "bet_")
PX_BINS = ((0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 99.0))
MIXED_PX_BINS = ((0.0, 1.8), (1.8, 2.2), (2.2, 3.0), (3.0, 5.0), (5.0, 99.0))  # mixed stacks: where the side is read
CONFIDENCE_BANDS = ((0.0, 0.5), (0.5, 0.8), (0.8, 1.01))
TRUSTED = 0.5  # the rules' ledger_min_confidence
ACCUSED = 0.8  # the rules accuse (D2/D3) only on counts this sure


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    totals: Counter[str] = field(default_factory=Counter)

    def add(self, key: str, ok: bool) -> None:
        self.totals[key] += 1
        self.counts[key] += int(ok)

    def merge(self, other: Tally) -> None:
        self.counts.update(other.counts)
        self.totals.update(other.totals)

    def rate(self, key: str) -> str:
        n = self.totals[key]
        return f"{100.0 * self.counts[key] / n:6.1f} % of {n:5d}" if n else "     -        "


class TruthNames:
    """A stand-in detector for truth boxes: only its class names are used (`state_from`)."""

    names = NAMES

    def detect(self, frame: Image) -> Detections:
        raise NotImplementedError("truth boxes are passed to state_from")


def exact_calibration(camera: Camera, layout: TableLayout) -> Calibration:
    corners = np.array([[-600.0, -300.0], [600.0, -300.0], [600.0, 300.0], [-600.0, 300.0]])
    pixels, _ = camera.project(np.hstack([corners, np.zeros((4, 1))]))
    pairs = [PointPair(pixel=(float(u), float(v)), table_mm=(float(x), float(y)))
             for (u, v), (x, y) in zip(pixels, corners, strict=True)]
    return calibrate_from_points(pairs, layout=layout, image_size=(camera.width, camera.height))


def truth_detections(chips: list[ObjectTruth]) -> Detections:
    return Detections(xyxy=np.array([o.box for o in chips], dtype=np.float32).reshape(-1, 4),
                      confidence=np.ones(len(chips), dtype=np.float32),
                      class_id=np.full(len(chips), DetectorClass.CHIP.value, dtype=np.int64))


def zone_truth(chips: list[ObjectTruth]) -> dict[str, int]:
    values: Counter[str] = Counter()
    for o in chips:
        if o.zone is not None and (o.zone.startswith(SEAT_ZONES) or o.zone == "pot"):
            values[o.zone] += sum(o.chips or ())
    return dict(values)


def partly_seen(chips: list[ObjectTruth], *, min_visible: float) -> set[str]:
    """Zones holding a stack less than `min_visible` in sight (under a hand or a card, or cut by the frame)."""
    return {o.zone for o in chips if o.zone is not None and o.visible_fraction < min_visible}


def score_zones(tally: Tally, key: str, truth: dict[str, int], state: TableState, *, partly: set[str]) -> None:
    """Zone values against the truth: all zones, those whose counts are all trusted, those the edge trusts, and
    those sure enough to accuse on among the zones seen whole (not `partly` seen: a zone cut by the frame, read
    empty, is no accusation) where a stack was read (a zone read empty accuses no one: those holding chips, their
    stacks missed by the detector, are counted on their own line)."""
    predicted = state.zone_values()
    counted: dict[str, float] = {}
    sure: dict[str, float] = {}
    for stack in state.chips:
        if stack.zone is not None:
            counted[stack.zone] = min(counted.get(stack.zone, 1.0), stack.count_confidence)
            sure[stack.zone] = min(sure.get(stack.zone, 1.0), stack.count_confidence, stack.denomination_confidence)
    for zone in set(truth) | {z for z in predicted if z.startswith(SEAT_ZONES) or z == "pot"}:
        right = truth.get(zone, 0) == predicted.get(zone, 0)
        tally.add(f"{key} zone value exact", right)
        tally.add(f"{key} zones with all counts >= {TRUSTED} (share)", counted.get(zone, 1.0) >= TRUSTED)
        tally.add(f"{key} zones trusted by the edge (share)", sure.get(zone, 1.0) >= TRUSTED)
        if counted.get(zone, 1.0) >= TRUSTED:
            tally.add(f"{key} zone value exact, all counts >= {TRUSTED}", right)
        if sure.get(zone, 1.0) >= TRUSTED:
            tally.add(f"{key} zone value exact, trusted by the edge", right)
        if zone in partly:
            continue
        tally.add(f"{key} zone value exact, seen whole", right)
        if zone not in sure:  # no stack read there: nothing to accuse on, but chips may have been missed
            tally.add(f"{key} zones seen whole read empty, holding chips (share)", truth.get(zone, 0) > 0)
            continue
        tally.add(f"{key} zones seen whole, sure enough to accuse on, >= {ACCUSED} (share)", sure[zone] >= ACCUSED)
        if sure[zone] >= ACCUSED:
            tally.add(f"{key} zone value exact, seen whole, sure enough to accuse on", right)


def iou(a: tuple[float, ...], b: np.ndarray) -> np.ndarray:
    """IoU of box `a` against boxes `b` (N, 4)."""
    return box_iou(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))[0]


@dataclass(frozen=True)
class Read:
    """One chip object's reading as scored: denominations, px per chip (-1 when unknown), count confidence."""

    denominations: tuple[int, ...]
    px_per_chip: float
    count_confidence: float
    denomination_confidence: float


def touching_ids(chips: list[ObjectTruth]) -> set[int]:
    """Ids of the stacks with another stack's centre within `seat_chips.TOUCHING_MM`."""
    return {o.id for o, near in zip(chips, touching([o.position_mm for o in chips]), strict=True) if near}


def score_stacks(tally: Tally, key: str, pairs: list[tuple[ObjectTruth, Read]], *, min_visible: float,
                 touching: set[int] | None = None) -> None:
    for truth, read in pairs:
        if truth.visible_fraction < min_visible or not truth.chips:
            continue
        predicted, px, confidence = read.denominations, read.px_per_chip, read.count_confidence
        exact = len(predicted) == len(truth.chips)
        if touching is not None:
            tally.add(f"{key} count exact, {'touching' if truth.id in touching else 'alone'}", exact)
        tally.add(f"{key} top denomination", predicted[-1] == truth.chips[-1])
        tally.add(f"{key} count exact", exact)
        tally.add(f"{key} stack exact", predicted == truth.chips)
        for lo, hi in PX_BINS if px >= 0 else ():
            if lo <= px < hi:
                tally.add(f"{key} count exact, {lo:.1f}-{hi:.1f} px/chip", exact)
        tally.add(f"{key} count confidence >= {TRUSTED} (share)", confidence >= TRUSTED)
        tally.add(f"{key} count confidence >= {ACCUSED} (share)", confidence >= ACCUSED)
        if confidence >= TRUSTED:
            tally.add(f"{key} count exact, confidence >= {TRUSTED}", exact)
        for lo, hi in CONFIDENCE_BANDS:
            if lo <= confidence < hi:
                tally.add(f"{key} count exact, confidence {lo:.1f}-{min(hi, 1.0):.1f}", exact)
        sure = min(confidence, read.denomination_confidence) >= ACCUSED
        tally.add(f"{key} stack sure: count and values >= {ACCUSED} (share)", sure)
        if sure:
            tally.add(f"{key} stack exact, count and values >= {ACCUSED}", predicted == truth.chips)
        if exact:
            kind = "one denomination" if len(set(truth.chips)) == 1 else "mixed"
            tally.add(f"{key} stack exact when counted right, {kind}", predicted == truth.chips)
            for lo, hi in PX_BINS if px >= 0 else ():
                if lo <= px < hi:
                    tally.add(f"{key} stack exact when counted right, {lo:.1f}-{hi:.1f} px/chip",
                              predicted == truth.chips)
            for lo, hi in MIXED_PX_BINS if px >= 0 and kind == "mixed" else ():
                if lo <= px < hi:
                    tally.add(f"{key} stack exact when counted right, mixed, {lo:.1f}-{hi:.1f} px/chip",
                              predicted == truth.chips)
            for a, b in zip(predicted, truth.chips, strict=True):
                tally.add(f"{key} chip denomination", a == b)


@dataclass
class Timing:
    """The recogniser's time on detector boxes (each read again, alone)."""

    seconds: float = 0.0
    reads: int = 0


def draw_frame(seed: int, index: int, *, size: tuple[int, int] | None,
               seats: bool) -> tuple[Scene, Camera, RenderResult]:
    """Frame `index` of a seed: a random scene (`seats`: a casino scene with the seats' stacks laid out as the
    scenario videos lay them) rendered with camera effects, from `SeedSequence(seed, spawn_key=(index,))`."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    scene, camera = random_sample(rng, size=size, style=SceneStyle.CASINO if seats else None)
    if seats:
        scene.chips = seat_chips(scene, rng)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    return scene, camera, result


def recogniser(args: argparse.Namespace, chipset: ChipSet, camera: TableCamera | None, **kwargs: Any) -> ChipRecogniser:
    """The chip recogniser with the command line's settings (`kwargs`: the box kind's own)."""
    return ChipRecogniser(chipset, camera=camera, refine=not args.no_refine, log_prior=() if args.flat_prior else None,
                          height_from_frame=not args.per_box, extend=not args.no_extend, jitter=not args.no_jitter,
                          side_net=None if args.no_side_net else "default", min_side_px=args.min_side_px,
                          box_net=None if args.no_box_net else "default", **kwargs)


def run_frame(index: int, args: argparse.Namespace, tally: Tally, detector: Detector | None, *,
              timing: Timing) -> str:
    """Score one frame into `tally`; returns its size group (WxH, portrait frames as landscape)."""
    scene, camera, result = draw_frame(args.seed, index, size=args.size, seats=args.scene == "seats")
    group = f"{max(camera.width, camera.height)}x{min(camera.width, camera.height)}"
    repeat_rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index, 1)))
    chips = [o for o in result.objects if o.cls == DetectorClass.CHIP and o.box[2] > o.box[0] and o.box[3] > o.box[1]]
    calibration = exact_calibration(camera, scene.layout)
    truth_zones = zone_truth(chips)
    partly = partly_seen(chips, min_visible=args.min_visible)
    touching = touching_ids(chips) if args.scene == "seats" else None
    chipset: ChipSet = args.chipset or scene.chipset  # what the recogniser reads with (the scene is drawn with its own)
    for key, height in (("homography", None), ("height", float(camera.eye[2]))):
        builder = TableStateBuilder(TruthNames(), scene.layout, calibration, chipset, None, None,
                                    camera_height_mm=height)
        builder.chips = recogniser(args, chipset, builder.chips.camera, box_sigma_px=BOX_SIGMA_PX)
        state = builder.state_from(result.image, truth_detections(chips), frame_no=index, t=0.0)
        # The state may hold fewer stacks than truth boxes (`one_box_per_stack` keeps one of two boxes whose feet
        # are read within half a diameter: touching stacks of `--scene seats`, which made this zip fail until
        # session 40): each truth box is paired with the state's stack whose box overlaps it most (IoU >= 0.5).
        boxes = np.array([c.box for c in state.chips], dtype=np.float64).reshape(-1, 4)
        pairs: list[tuple[ObjectTruth, Read]] = []
        for o in chips:
            overlaps = iou(o.box, boxes) if len(boxes) else np.zeros(0)
            kept = bool(overlaps.size) and float(overlaps.max()) >= 0.5
            if o.visible_fraction >= args.min_visible and o.chips:
                tally.add(f"truth boxes, {key}: truth box with no stack read on it (share)", not kept)
            if kept:
                s = state.chips[int(np.argmax(overlaps))]
                pairs.append((o, Read(s.denominations, builder.chips.read(result.image, o.box).px_per_chip,
                                      s.count_confidence, s.denomination_confidence)))
        score_stacks(tally, f"truth boxes, {key}:", pairs, min_visible=args.min_visible, touching=touching)
        score_zones(tally, f"truth boxes, {key}:", truth_zones, state, partly=partly)
        if args.repeat and height is None:
            score_repeatability(tally, f"repeat, truth boxes, {key}:", result.image, builder.chips,
                                [o.box for o in chips if o.visible_fraction >= args.min_visible], rng=repeat_rng,
                                moves=False)
    plain = ChipRecogniser(chipset)  # no calibration: the top chip only
    for o in chips:
        if o.visible_fraction >= args.min_visible and o.chips:
            top = plain.read(result.image, o.box).top
            tally.add("truth boxes, no calibration: top denomination", top == o.chips[-1])
    if detector is None:
        return group
    builder = TableStateBuilder(detector, scene.layout, calibration, chipset, None, None)
    builder.chips = recogniser(args, chipset, builder.chips.camera, find_top=not args.no_find_top)
    detections = detector.detect(result.image)
    state = builder.state_from(result.image, detections, frame_no=index, t=0.0)
    measured = TableStateBuilder(detector, scene.layout, calibration, chipset, None, None,
                                 camera_height_mm=float(camera.eye[2]))
    measured.chips = recogniser(args, chipset, measured.chips.camera, find_top=not args.no_find_top)
    score_detected(tally, "detector boxes, height:", chips, measured.state_from(result.image, detections,
                   frame_no=index, t=0.0), truth_zones, partly=partly, touching=touching, args=args)
    boxes = np.array([c.box for c in state.chips], dtype=np.float64).reshape(-1, 4)
    started = time.perf_counter()
    for box in boxes:
        builder.chips.read(result.image, (float(box[0]), float(box[1]), float(box[2]), float(box[3])))
    timing.seconds += time.perf_counter() - started
    timing.reads += len(boxes)
    for o in chips:
        if o.visible_fraction >= args.min_visible:
            overlaps = iou(o.box, boxes) if len(boxes) else np.zeros(0)
            tally.add("detector: chip recall (IoU 0.5)", bool(overlaps.size) and float(overlaps.max()) >= 0.5)
    score_detected(tally, "detector boxes:", chips, state, truth_zones, partly=partly, touching=touching, args=args)
    if args.repeat:
        score_repeatability(tally, "repeat, detector boxes:", result.image, builder.chips,
                            [(float(b[0]), float(b[1]), float(b[2]), float(b[3])) for b in boxes], rng=repeat_rng)
    return group


def score_detected(tally: Tally, key: str, chips: list[ObjectTruth], state: TableState, truth_zones: dict[str, int],
                   *, partly: set[str], touching: set[int] | None, args: argparse.Namespace) -> None:
    """Stacks (matched to truth boxes at IoU >= 0.5) and zones of a state built on the detector's boxes."""
    boxes = np.array([c.box for c in state.chips], dtype=np.float64).reshape(-1, 4)
    pairs: list[tuple[ObjectTruth, Read]] = []
    for o in chips:
        overlaps = iou(o.box, boxes) if len(boxes) else np.zeros(0)
        if overlaps.size and float(overlaps.max()) >= 0.5:
            seen = state.chips[int(np.argmax(overlaps))]
            pairs.append((o, Read(seen.denominations, -1.0, seen.count_confidence,  # px/chip not kept
                                  seen.denomination_confidence)))
    score_stacks(tally, key, pairs, min_visible=args.min_visible, touching=touching)
    score_zones(tally, key, truth_zones, state, partly=partly)


# How a box may move between two frames of a stack at rest (`--repeat`): its detector box shifted or grown a pixel or
# two, or another stack of the frame gone from the context its camera height is told by.
_STEPS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def moved_boxes(box: tuple[float, ...], rng: np.random.Generator, *,
                size: tuple[int, int]) -> list[tuple[str, tuple[float, float, float, float]]]:
    """The box shifted by 1 and by 2 px (random directions), one random side moved 1 px in or out, and every side
    1 px out, kept inside the image."""
    x1, y1, x2, y2 = box
    (ax, ay), (bx, by) = (_STEPS[int(k)] for k in rng.integers(len(_STEPS), size=2))
    side = list(box)
    k = int(rng.integers(4))
    side[k] += float(rng.choice((-1.0, 1.0)))
    moved = [("shift 1 px", (x1 + ax, y1 + ay, x2 + ax, y2 + ay)),
             ("shift 2 px", (x1 + 2 * bx, y1 + 2 * by, x2 + 2 * bx, y2 + 2 * by)),
             ("one side 1 px", (side[0], side[1], side[2], side[3])),
             ("grown 1 px", (x1 - 1.0, y1 - 1.0, x2 + 1.0, y2 + 1.0))]
    width, height = size
    return [(name, (max(0.0, b[0]), max(0.0, b[1]), min(float(width), b[2]), min(float(height), b[3])))
            for name, b in moved if min(float(width), b[2]) - max(0.0, b[0]) >= 2
            and min(float(height), b[3]) - max(0.0, b[1]) >= 2]


def score_repeatability(tally: Tally, key: str, image: np.ndarray, recogniser: ChipRecogniser,
                        boxes: list[tuple[float, float, float, float]], *, rng: np.random.Generator,
                        moves: bool = True) -> None:
    """Each stack read again as `TableStateBuilder._read_chips` reads a stack that moved while the frame's others
    rest (their evidence the context): its box moved (`moved_boxes`), or with another stack left out of the
    context; read alone, and given the first reading as its `previous` (as `_read_chips` gives a stack the last
    frame's reading at the same place). Counts and values that stay as first read, per change and over all; the
    first read's confidence of those that stay and those that change. A stack that did change: the first reading
    given a last reading 1 or 3 chips off, and how often that count is kept. Without `moves`, boxes are not moved
    (a mask's box moved by a pixel is another stack to a recogniser told it is exact to rounding)."""
    evidence = [recogniser.evidence(image, box) for box in boxes]
    first = recogniser.read_evidence(image, evidence)
    size = (image.shape[1], image.shape[0])
    for i, box in enumerate(boxes):
        others = [*evidence[:i], *evidence[i + 1:]]
        changes = [(name, [recogniser.evidence(image, moved)], others)
                   for name, moved in (moved_boxes(box, rng, size=size) if moves else [])]
        if others:
            drop = int(rng.integers(len(others)))
            changes.append(("a neighbour left out", [evidence[i]], [*others[:drop], *others[drop + 1:]]))
        for k in (-3, -1, 1, 3):
            if first[i].count + k >= 1:
                last = replace(first[i], denominations=(first[i].top,) * (first[i].count + k))
                kept = recogniser.read_evidence(image, [evidence[i]], context=others, previous=[last])[0]
                tally.add(f"{key} with the last reading, {abs(k)} chips off: kept (should change)",
                          kept.count == last.count)
        if not changes:
            continue
        for hint, label in ((None, ""), ([first[i]], ", with the last reading")):
            again = [(name, recogniser.read_evidence(image, e, context=c, previous=hint)[0]) for name, e, c in changes]
            for name, read in again:
                tally.add(f"{key} count unchanged{label}, {name}", read.count == first[i].count)
                tally.add(f"{key} value unchanged{label}, {name}", read.value == first[i].value)
            stays = all(read.count == first[i].count for _, read in again)
            tally.add(f"{key} count unchanged{label}, all changes", stays)
            tally.add(f"{key} value unchanged{label}, all changes", all(r.value == first[i].value for _, r in again))
            for lo, hi in CONFIDENCE_BANDS:
                if lo <= first[i].count_confidence < hi:
                    tally.add(f"{key} count unchanged{label}, confidence {lo:.1f}-{min(hi, 1.0):.1f}", stays)
            state = "stays" if stays else "changes"
            for level in (TRUSTED, ACCUSED):
                tally.add(f"{key} count confidence >= {level}{label} (share), count {state}",
                          first[i].count_confidence >= level)


SECOND_LOOK_PX = 90.0  # --second-look: the median crowded chip box's length at the second look (px)


def parse_frame_size(text: str) -> tuple[int, int] | None:
    """``"mixed"`` (None: drawn per frame as the renderer draws it) or ``"WxH"``."""
    return None if text == "mixed" else parse_size(text)


def grouped(key: str) -> bool:
    """Whether a figure is also printed per frame-size group: denominations (top and per chip), counts, zone values,
    the counts the rules accuse on."""
    return key.endswith((": top denomination", ": chip denomination", ": count exact", ": zone value exact",
                         ": zone value exact, seen whole",
                         "count exact, touching", "count exact, alone",
                         f"count exact, confidence {ACCUSED:.1f}-1.0",
                         f"count confidence >= {ACCUSED} (share)"))


def write_groups(groups: dict[str, Tally]) -> None:
    out = sys.stdout
    for group in sorted(groups, key=lambda g: tuple(int(v) for v in g.split("x"))):
        tally = groups[group]
        frames = tally.totals["frames"]
        out.write(f"size group {group} ({frames} frames):\n")
        for key in sorted(k for k in tally.totals if grouped(k)):
            out.write(f"  {key:<62} {tally.rate(key)}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--seed", type=int, default=93001)
    parser.add_argument("--size", type=parse_frame_size, default=(1280, 720),
                        help="WxH, or 'mixed': drawn per frame as `floorman datasets render` draws it")
    parser.add_argument("--min-visible", type=float, default=0.9)
    parser.add_argument("--scene", choices=("random", "seats"), default="random",
                        help="random training scenes, or seats' stacks laid out as the scenario videos do")
    parser.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8 model)")
    parser.add_argument("--no-detector", action="store_true", help="truth boxes only")
    parser.add_argument("--chipset", type=ChipSet.load, help="read with this chip set (e.g. one `floorman chips "
                        "calibrate` learned from other frames); the frames are drawn with the shipped one")
    parser.add_argument("--no-refine", action="store_true",
                        help="counts from the boxes alone (no silhouette fitted to the image's edges)")
    parser.add_argument("--no-extend", action="store_true",
                        help="detector boxes read as they are, not run on past a stack's base (`chips_extend`)")
    parser.add_argument("--no-jitter", action="store_true",
                        help="detector boxes read once, not again a pixel off each way on large frames "
                        "(`BOX_JITTER_PX`)")
    top_disc = parser.add_mutually_exclusive_group()
    top_disc.add_argument("--find-top", action="store_true",
                          help="detector boxes cut across their top disc run on to where a top disc fits "
                          "(`ChipRecogniser.find_top`; the default since session 56)")
    top_disc.add_argument("--no-find-top", action="store_true",
                          help="detector boxes cut across their top disc read as they are (`ChipRecogniser.find_top` "
                          "off)")
    parser.add_argument("--no-side-net", action="store_true",
                        help="the chips under the top read by their side labels and rims' pattern, not by the learned "
                        "side reader (`ChipRecogniser.side_net`, session 59)")
    parser.add_argument("--no-box-net", action="store_true",
                        help="the detector's chip boxes refined by the image's edges alone, not first by the learned "
                        "box-side reader (`ChipRecogniser.box_net`, session 60)")
    parser.add_argument("--min-side-px", type=float, default=MIN_SIDE_PX,
                        help=f"read the chips under the top from sides of this many pixels per chip (default "
                        f"{MIN_SIDE_PX}; thinner: taken as the top)")
    parser.add_argument("--second-look", action="store_true",
                        help="a second finer look at crowded chip boxes, at the frame's own pixels "
                        "(`OnnxDetectorConfig.refine_native_px` 90; off by default)")
    parser.add_argument("--refine-model", type=Path, default=None,
                        help="ONNX detector that takes the finer looks at crowded chips "
                        "(`OnnxDetectorConfig.refine_model`)")
    parser.add_argument("--per-box", action="store_true",
                        help="read each stack alone (an assumed camera height not told by the frame's stacks)")
    parser.add_argument("--flat-prior", action="store_true",
                        help="every count equally likely (not the recogniser's prior, `ChipRecogniser.log_prior`)")
    parser.add_argument("--repeat", action="store_true",
                        help="repeatability: each box read again shifted or grown by 1-2 px, and with another stack "
                        "left out of the frame's context (as `TableStateBuilder` reads a stack that moved)")
    args = parser.parse_args()
    detector = None
    if not args.no_detector:
        from floorman.vision.detect_cli import default_model

        detector = create_detector(OnnxDetectorConfig(model=args.model or default_model(),
                                                      refine_native_px=SECOND_LOOK_PX if args.second_look else None,
                                                      refine_model=args.refine_model))
    tally = Tally()
    timing = Timing()
    started = time.perf_counter()
    groups: dict[str, Tally] = {}
    for index in range(args.frames):
        frame = Tally()
        group = run_frame(index, args, frame, detector, timing=timing)
        frame.add("frames", True)
        tally.merge(frame)
        groups.setdefault(group, Tally()).merge(frame)
    out = sys.stdout
    size = "mixed sizes" if args.size is None else f"{args.size[0]}x{args.size[1]}"
    out.write(f"chips benchmark: {args.frames} {args.scene} frames of {size}, seed {args.seed}, "
              f"chips >= {args.min_visible:.0%} visible, {time.perf_counter() - started:.0f} s\n")
    out.write("targets: denomination >= 98 %, count exact >= 90 %, zone value exact >= 90 %\n")
    for key in sorted(k for k in tally.totals if k != "frames"):
        out.write(f"  {key:<62} {tally.rate(key)}\n")
    if timing.reads:
        out.write(f"  {'detector boxes: ms per stack read':<62} {1000.0 * timing.seconds / timing.reads:6.1f} ms "
                  f"({timing.reads} reads, {'boxes only' if args.no_refine else 'silhouette refined'})\n")
    if args.size is None:
        write_groups(groups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
