"""Chips counted per colour on photo-like frames, as `floorman detect IMAGE --json` counts them (no calibration).

    .venv/bin/python benchmarks/chips_photo.py [--frames 30] [--seed 95121] [--size 3000x2000] [--model M]
                                               [--straight-down] [--tilt DEG] [--chip-designs P] [--verbose]

Each frame is a home-style scene (`datasets.random_sample(..., style=SceneStyle.HOME)`: a light-wood table shot
straight down and close, 2-16 mostly single chips, sometimes a chip rack at the side), camera effects on, drawn
from `SeedSequence(seed, spawn_key=(i,))`; use seeds never used for anything else. On each frame the detector
runs as `floorman detect` runs it (default thresholds and pyramid; a plain white chip boxed as the dealer button
counted as a chip, `vision.button_or_chip`) and `detect_cli.read_chips` reads its chip boxes without a calibration
(the held-out photos come uncalibrated): one chip per box, its top's colour.
`detect_cli.chip_totals` (the JSON's `chip_totals`) is compared with the truth, the chips of every chip object
of the scene (racks excluded):
- exact per colour: the share of frames whose count of that colour is exact; all colours: every colour exact;
- mean absolute error per colour (chips per frame);
- what goes wrong, per chip object matched to a detector box (IoU >= 0.5): truth stacks of 2+ chips (read as one
  chip: no count without a calibration, unless `--straight-down`), counts wrong (of single chips and of stacks),
  top colour wrong, objects missed (by visibility), and detector boxes that match no chip object (in frames with a
  rack and without).
`--tilt DEG` turns each camera DEG off vertical, as a photo taken by hand (the tilt check of `--straight-down`).
`--straight-down` counts the stacks as `floorman detect --straight-down` does (`vision.straight_down`: the camera a
straight-down photo implies, over the image's centre, scaled by the chips).
`--chip-designs P` plays that share of the frames with another club's chips (`datasets.chip_designs`: the five
colours in the club's own shades, spots and inlays; white chips often plain, white spots on white), still read with
the shipped chip set, as `floorman detect` reads a photo without `--chipset`; misses are then counted per top chip.
--verbose prints every wrong colour, miss and extra box.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from floorman.core.chips import ChipDenomination, ChipSet
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import ObjectTruth, Renderer
from floorman.datasets.render_cli import parse_size
from floorman.datasets.render_dataset import TRAINING_OPTIONS
from floorman.datasets.scene import DetectorClass
from floorman.vision.button_or_chip import buttons_as_chips
from floorman.vision.chips import ChipReading, ChipRecogniser
from floorman.vision.detect_cli import chip_totals, colour_name, counted_chips, default_model, read_chips
from floorman.vision.detector import Detector, OnnxDetectorConfig, box_iou, create_detector
from photo_effects import tilted  # the benchmarks folder is no package

MATCH_IOU = 0.5
_SPOTS_SHOW = 40  # edge spots within this many levels of the body's colour (every channel) do not show


@dataclass
class Totals:
    frames: int = 0
    all_exact: int = 0
    exact: Counter[int] = field(default_factory=Counter)
    abs_error: Counter[int] = field(default_factory=Counter)
    issues: Counter[str] = field(default_factory=Counter)


def iou(a: tuple[float, ...], b: np.ndarray) -> np.ndarray:
    """IoU of box `a` against boxes `b` (N, 4)."""
    return box_iou(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))[0]


def design(denomination: ChipDenomination) -> str:
    """A chip's colour word (the shipped set's for its value: a club's light blue is its blue) and, where its edge
    spots do not show (none, or of the body's colour), "plain"."""
    plain = not denomination.edge_spots or max(
        abs(a - b) for a, b in zip(denomination.rgb, denomination.edge_rgb, strict=True)) < _SPOTS_SHOW
    word = colour_name(ChipSet.default().by_value(denomination.value).rgb)
    return f"{word}{', plain' if plain else ''}"


def diagnose(totals: Totals, chips: list[ObjectTruth], boxes: np.ndarray, readings: list[ChipReading], *,
             rack: bool, verbose: str, club: ChipSet | None = None) -> None:
    """Per chip object: matched (and its colour), a stack, or missed; per detector box: matched or extra. With
    `club` (the scene's chip set, another club's), objects and misses are also counted per top chip's design."""
    truth_boxes = np.array([o.box for o in chips], dtype=np.float64).reshape(-1, 4)
    for o in chips:
        chips_of = o.chips or ()
        by_top = design(club.by_value(chips_of[-1])) if club is not None and chips_of else ""
        if by_top:
            totals.issues[f"chip objects: top {by_top}"] += 1
        if len(chips_of) > 1:
            totals.issues["chip objects: stacks of 2+ chips"] += 1
        overlaps = iou(o.box, boxes) if len(boxes) else np.zeros(1)
        if float(overlaps.max()) < MATCH_IOU:
            seen = "visible >= 50 %" if o.visible_fraction >= 0.5 else "visible < 50 %"
            totals.issues[f"chip objects: missed, {seen}"] += 1
            if by_top:
                totals.issues[f"chip objects: missed, top {by_top}"] += 1
            if verbose:
                sys.stdout.write(f"  {verbose}: missed {chips_of} at {[round(v) for v in o.box]}, {seen}\n")
            continue
        totals.issues["chip objects: matched"] += 1
        reading = readings[int(np.argmax(overlaps))]
        if chips_of and reading.count != len(chips_of):
            kind = "a single chip" if len(chips_of) == 1 else "a stack"
            totals.issues[f"chip objects: count wrong, {kind}"] += 1
            if verbose:
                sys.stdout.write(f"  {verbose}: {chips_of} counted {reading.count} ({reading.count_confidence:.2f}) "
                                 f"at {[round(v) for v in o.box]}\n")
        if chips_of and reading.top != chips_of[-1]:
            totals.issues["chip objects: top colour wrong"] += 1
            if verbose:
                sys.stdout.write(f"  {verbose}: {chips_of} read as {reading.top} at {[round(v) for v in o.box]}\n")
    for box in boxes:
        overlaps = iou(tuple(box), truth_boxes) if len(truth_boxes) else np.zeros(1)
        if float(overlaps.max()) < MATCH_IOU:
            totals.issues["detector boxes: extra, frame with a rack" if rack else "detector boxes: extra"] += 1
            if verbose:
                where = [round(float(v)) for v in box]
                sys.stdout.write(f"  {verbose}: extra box {where}{' (rack)' if rack else ''}\n")


def run_frame(index: int, args: argparse.Namespace, detector: Detector, totals: Totals) -> None:
    rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index,)))
    scene, camera = random_sample(rng, size=args.size, style=SceneStyle.HOME, chip_designs=args.chip_designs)
    if args.tilt:  # a photo taken by hand off vertical: the camera turned about its target, from a random side
        camera = tilted(camera, args.tilt, azimuth_deg=float(rng.uniform(0.0, 360.0)))
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    chipset = ChipSet.default()  # the shipped set: a club's own chips are read as `floorman detect` reads them
    chips = [o for o in result.objects if o.cls == DetectorClass.CHIP and o.box[2] > o.box[0] and o.box[3] > o.box[1]]
    detections = buttons_as_chips(result.image, detector.detect(result.image), names=detector.names)
    readings = read_chips(result.image, detections, names=detector.names, recogniser=ChipRecogniser(chipset),
                          straight_down=args.straight_down)
    counted = counted_chips(readings, detections, image_size=(result.image.shape[1], result.image.shape[0]),
                            every_box=args.straight_down)
    predicted = {t.value: t.chips for t in chip_totals(counted, chipset)}
    truth = Counter(v for o in chips for v in (o.chips or ()))
    errors = {v: abs(predicted.get(v, 0) - truth.get(v, 0)) for v in chipset.values}
    totals.frames += 1
    totals.all_exact += int(not any(errors.values()))
    for value, error in errors.items():
        totals.exact[value] += int(error == 0)
        totals.abs_error[value] += error
    order = sorted(readings)
    boxes = detections.xyxy[order].astype(np.float64).reshape(-1, 4)
    diagnose(totals, chips, boxes, [readings[i] for i in order], rack=bool(scene.appearance.racks),
             verbose=f"frame {index}" if args.verbose else "", club=scene.chipset if args.chip_designs else None)
    if args.verbose and any(errors.values()):
        sys.stdout.write(f"frame {index}: truth {dict(sorted(truth.items()))}, "
                         f"counted {dict(sorted(predicted.items()))}{', rack' if scene.appearance.racks else ''}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--seed", type=int, default=95121)
    parser.add_argument("--size", type=parse_size, default=(3000, 2000))
    parser.add_argument("--model", help="ONNX detector (default: the shipped INT8 photo detector)")
    parser.add_argument("--straight-down", action="store_true", help="count stacks as `floorman detect "
                        "--straight-down` does (a camera over the image's centre implied)")
    parser.add_argument("--tilt", type=float, default=0.0, metavar="DEG", help="turn each photo's camera this "
                        "many degrees off vertical about its target (`photo_effects.tilted`; default 0: as drawn)")
    parser.add_argument("--chip-designs", type=float, default=0.0, metavar="P", help="share of the frames played "
                        "with another club's chips (`datasets.chip_designs`), read with the shipped chip set "
                        "(default 0: the shipped set's chips)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    detector = create_detector(OnnxDetectorConfig(model=args.model or default_model(photos=True)))
    totals = Totals()
    started = time.perf_counter()
    for index in range(args.frames):
        run_frame(index, args, detector, totals)
    values = ChipSet.default().values
    n = max(totals.frames, 1)
    out = sys.stdout
    clubs = f"another club's chips in {args.chip_designs:.0%} of them, " if args.chip_designs else ""
    out.write(f"chips per colour: {args.frames} home-style frames of {args.size[0]}x{args.size[1]}, seed {args.seed}, "
              f"{f'tilted {args.tilt:g} degrees, ' if args.tilt else ''}"
              f"{clubs}"
              f"no calibration{', straight down' if args.straight_down else ''}, "
              f"{time.perf_counter() - started:.0f} s\n")
    out.write(f"  {'exact per colour (share of frames)':<40} "
              + "  ".join(f"{v}: {100.0 * totals.exact[v] / n:5.1f} %" for v in values)
              + f"  all colours: {100.0 * totals.all_exact / n:5.1f} %\n")
    out.write(f"  {'mean absolute error (chips per frame)':<40} "
              + "  ".join(f"{v}: {totals.abs_error[v] / n:5.2f}  " for v in values) + "\n")
    for key in sorted(totals.issues):
        out.write(f"  {key:<48} {totals.issues[key]:5d}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
