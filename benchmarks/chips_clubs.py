"""Other clubs' chips read with the shipped chip set and with one `floorman chips calibrate` learnt from their frames.

    .venv/bin/python benchmarks/chips_clubs.py [--clubs 3] [--seed 27995] [--calibrate-frames 4] [--frames 16]
                                               [--model M]

Each club is `datasets.chip_designs.club_chipset` drawn from `default_rng([seed, club])`; its frames are home-style
photo-like scenes played with its chips (frame i from `SeedSequence(seed, spawn_key=(club, i))`, camera effects on).
The first --calibrate-frames are calibrated on as `floorman chips calibrate --frames ...` does (`chip_boxes` at
confidence >= 0.4, `chip_tops`, `learn_colours`, `calibrated_chipset`; its warnings counted: a cluster that
looks most like another denomination); the next --frames are read as `floorman detect` reads a photo (no camera
model), once with the shipped set and once with the learnt one, and each chip object matched to a detector box (IoU
>= 0.5) counts its top's value right or wrong. Use seeds never used for anything else to measure.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from floorman.core.chips import ChipSet
from floorman.datasets.chip_designs import club_chipset
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import Renderer, RenderResult
from floorman.datasets.render_dataset import TRAINING_OPTIONS
from floorman.datasets.scene import DetectorClass
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_calibrate import calibrated_chipset, chip_boxes, chip_tops, learn_colours
from floorman.vision.detect_cli import default_model, read_chips
from floorman.vision.detector import Detector, OnnxDetectorConfig, box_iou, create_detector

CALIBRATE_CONF = 0.4  # `floorman chips calibrate --conf`'s default


def tops_right(frames: list[RenderResult], detector: Detector, chipset: ChipSet) -> tuple[int, int]:
    """Chip objects whose top value is read right, and those matched to a detector box at all."""
    right = matched = 0
    for result in frames:
        detections = detector.detect(result.image)
        readings = read_chips(result.image, detections, names=detector.names, recogniser=ChipRecogniser(chipset))
        order = sorted(readings)
        boxes = detections.xyxy[order].astype(np.float64).reshape(-1, 4)
        for obj in result.objects:
            if obj.cls != DetectorClass.CHIP or not obj.chips or not len(boxes):
                continue
            overlaps = box_iou(np.asarray(obj.box, dtype=np.float64), boxes)[0]
            if float(overlaps.max()) >= 0.5:
                matched += 1
                right += int(readings[order[int(np.argmax(overlaps))]].top == obj.chips[-1])
    return right, matched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clubs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=27995)
    parser.add_argument("--calibrate-frames", type=int, default=4)
    parser.add_argument("--frames", type=int, default=16, help="frames read per club")
    parser.add_argument("--model", help="ONNX detector (default: the shipped INT8 photo detector)")
    args = parser.parse_args()
    if args.clubs < 1 or args.calibrate_frames < 1 or args.frames < 1:
        parser.error(f"expected --clubs, --calibrate-frames and --frames >= 1, got {args.clubs}, "
                     f"{args.calibrate_frames} and {args.frames}")
    model = args.model or default_model(photos=True)
    detector = create_detector(OnnxDetectorConfig(model=model))
    calibrating = create_detector(OnnxDetectorConfig(model=model, conf=CALIBRATE_CONF))
    shipped = ChipSet.default()
    started = time.perf_counter()
    totals = {"shipped": [0, 0], "calibrated": [0, 0]}
    out = sys.stdout
    for club_index in range(args.clubs):
        club = club_chipset(np.random.default_rng([args.seed, club_index]), shipped)
        frames = []
        for i in range(args.calibrate_frames + args.frames):
            rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(club_index, i)))
            scene, camera = random_sample(rng, size=(3000, 2000), style=SceneStyle.HOME, chipset=club)
            frames.append(Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng),
                                                                            rng=rng))
        seen = [(result.image, chip_boxes(calibrating, result.image)) for result in frames[:args.calibrate_frames]]
        learned = learn_colours(chip_tops(seen, radius_mm=shipped.diameter_mm / 2.0), shipped)
        warnings = sum(1 for item in learned if item.nearest != item.value)
        learnt = calibrated_chipset(shipped, learned)
        out.write(f"club {club_index}: " + ", ".join(f"{d.value} {d.colour}/{d.edge_colour} x{d.edge_spots}"
                                                    for d in club.denominations) + "\n")
        for name, chipset in (("shipped", shipped), ("calibrated", learnt)):
            right, matched = tops_right(frames[args.calibrate_frames:], detector, chipset)
            totals[name][0] += right
            totals[name][1] += matched
            out.write(f"  {name:<10} tops right {right} of {matched}"
                      f"{f' ({warnings} calibration warnings)' if name == 'calibrated' and warnings else ''}\n")
    out.write(f"{args.clubs} clubs, {args.calibrate_frames} frames calibrated on and {args.frames} read each, seed "
              f"{args.seed}, {time.perf_counter() - started:.0f} s\n")
    for name, (right, matched) in totals.items():
        out.write(f"  {name:<10} tops right {right} of {matched} ({100.0 * right / max(matched, 1):.1f} %)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
