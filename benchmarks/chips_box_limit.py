"""How far a stack's box alone can tell its chip count, by pixels per chip, beside what the recogniser reads.

    .venv/bin/python benchmarks/chips_box_limit.py [--frames 40] [--seed 42001] [--size mixed|WxH]

On the random frames of `benchmarks/chips.py` (frame i drawn from `SeedSequence(seed, spawn_key=(i,))`, the
calibration exact, the camera's height given), each stack wholly in sight and clear of the frame's border is boxed
from its instance mask (the truth box) and compared with the box of the cylinder the recogniser's camera model draws
for the true stack (its true base, its true count: `chips_geometry.stack_outline`). The box grows only on its far
side (away from the point under the camera) as chips are added, by `px/chip`; so, per band of pixels per chip:
- the near and far sides' error (px, sd): the near side is rounding alone (~0.3 px); the far side, the top disc, also
  carries the stack's lean and the top's drawn edge;
- the box's length error in chips (far minus near side, over px/chip: mean and sd), and the share of stacks within
  half a chip of their count by it: what a count from the box alone (no prior, no seams) could at best get right,
  were the base known;
- the recogniser's count exact on the same stacks, truth boxes (`TableStateBuilder` with the camera's height: what
  `benchmarks/chips.py` prints as "truth boxes, height"), measured in the same run.
Below ~1.5 px per chip the box alone cannot tell counts apart at the issue's 90 %: the recogniser's prior over
counts and, from 2 px per chip, the side's seams are what it has beyond it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from floorman.datasets.scene import DetectorClass
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_geometry import BOX_SIGMA_PX, StackFit, stack_outline
from floorman.vision.table_state import TableStateBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benchmarks folder is no package
from chips import TruthNames, draw_frame, exact_calibration, iou, parse_frame_size, truth_detections

BANDS = ((0.0, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 3.0), (3.0, 99.0))


def measure(seed: int, frames: int, size: tuple[int, int] | None) -> dict[tuple[float, float], list[tuple[float, ...]]]:
    """Per band: (near side error, far side error, length error in chips, recogniser exact 0/1) of each stack."""
    rows: dict[tuple[float, float], list[tuple[float, ...]]] = defaultdict(list)
    for index in range(frames):
        scene, camera, result = draw_frame(seed, index, size=size, seats=False)
        chips = [o for o in result.objects if o.cls == DetectorClass.CHIP and o.box[2] > o.box[0]
                 and o.box[3] > o.box[1]]
        builder = TableStateBuilder(TruthNames(), scene.layout, exact_calibration(camera, scene.layout),
                                    scene.chipset, None, None, camera_height_mm=float(camera.eye[2]))
        recogniser = ChipRecogniser(scene.chipset, camera=builder.chips.camera, box_sigma_px=BOX_SIGMA_PX)
        builder.chips = recogniser
        state = builder.state_from(result.image, truth_detections(chips), frame_no=index, t=0.0)
        boxes = np.array([c.box for c in state.chips], dtype=np.float64).reshape(-1, 4)
        table_camera = recogniser.camera
        assert table_camera is not None
        for o in chips:
            x1, y1, x2, y2 = o.box
            inside = x1 > 1 and y1 > 1 and x2 < camera.width - 1 and y2 < camera.height - 1
            if o.visible_fraction < 0.999 or not o.chips or not inside or not len(boxes):
                continue
            n = len(o.chips)
            fit = StackFit(base_mm=(float(o.position_mm[0]), float(o.position_mm[1])), count=n,
                           count_confidence=1.0, px_per_chip=0.0, residual_px=0.0)
            outline = stack_outline(table_camera, fit, radius_mm=scene.chipset.diameter_mm / 2.0,
                                    thickness_mm=scene.chipset.thickness_mm)
            model = np.concatenate([outline.min(axis=0), outline.max(axis=0)])
            seen = np.array([x1, y1, x2 - 1.0, y2 - 1.0])  # as the recogniser takes a box: pixel centres
            outward = np.array([model[0] - seen[0], model[1] - seen[1], seen[2] - model[2], seen[3] - model[3]])
            ends = table_camera.project(np.array([[*o.position_mm, 0.0],
                                                  [*o.position_mm, n * scene.chipset.thickness_mm]]))
            offset = ends[1] - ends[0]
            px_per_chip = float(np.hypot(*offset)) / n
            if abs(offset[0]) > abs(offset[1]):
                far, near = (2, 0) if offset[0] > 0 else (0, 2)
            else:
                far, near = (3, 1) if offset[1] > 0 else (1, 3)
            length = (outward[far] + outward[near]) / max(px_per_chip, 1e-6)
            overlaps = iou(o.box, boxes)
            read = state.chips[int(np.argmax(overlaps))] if overlaps.max() >= 0.5 else None
            exact = float(read is not None and len(read.denominations) == n)
            band = next(b for b in BANDS if b[0] <= px_per_chip < b[1])
            rows[band].append((float(outward[near]), float(outward[far]), float(length), exact))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--seed", type=int, default=42001)
    parser.add_argument("--size", type=parse_frame_size, default=None,
                        help="WxH, or 'mixed' (the default): drawn per frame as `floorman datasets render` draws it")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = measure(args.seed, args.frames, args.size)
    size = "mixed sizes" if args.size is None else f"{args.size[0]}x{args.size[1]}"
    print(f"stack boxes against the camera model's box of the true stack: {args.frames} frames of {size}, seed "
          f"{args.seed}, {time.perf_counter() - started:.0f} s")
    print("| px/chip | stacks | near side sd (px) | far side sd (px) | length error, chips: mean / sd "
          "| within 0.5 chip by the box | recogniser count exact |")
    print("|---|---|---|---|---|---|---|")
    total, within, exact = 0, 0.0, 0.0
    for band in BANDS:
        values = np.array(rows.get(band, []), dtype=np.float64).reshape(-1, 4)
        if not len(values):
            continue
        share = float(np.mean(np.abs(values[:, 2]) < 0.5))
        total, within, exact = total + len(values), within + share * len(values), exact + values[:, 3].sum()
        print(f"| {band[0]:.1f}-{band[1]:.1f} | {len(values)} | {values[:, 0].std():.2f} | {values[:, 1].std():.2f} "
              f"| {values[:, 2].mean():+.2f} / {values[:, 2].std():.2f} | {share:.1%} | {values[:, 3].mean():.1%} |")
    if total:
        print(f"| all | {total} | | | | {within / total:.1%} | {exact / total:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
