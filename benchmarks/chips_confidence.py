"""How right the chip recogniser's readings are against the confidence it gives them, on the detector's boxes: the
reliability tables `chips.TOP_RIGHT` is measured from, and the check that the confidences the edge and the rules act
on mean what they say.

    .venv/bin/python benchmarks/chips_confidence.py [--sample SEED,FRAMES,SIZE,SCENE ...] [--model M]

Each sample is FRAMES random frames of `benchmarks/chips.py` (`SIZE` WxH or mixed, `SCENE` random or seats; frame i
drawn from `SeedSequence(SEED, spawn_key=(i,))`), the calibration exact and the camera's height given. The shipped
detector's chip boxes are read together (`ChipRecogniser.read_frame`) and matched to the rendered stacks at IoU >= 0.5
(stacks >= 90 % in sight). The default samples are the dev seeds `TOP_RIGHT` was fitted on; give fresh seeds to
check it. Printed, over all samples and per frame-size group (1280 px wide or less / wider), by band:
- the top colour match's score (`ChipReading.top_score`) against how often the top's value is right, with a 90 %
  lower bound (Wilson): what `TOP_RIGHT` maps the score to;
- the values' confidence (`ChipReading.confidence`) against how often every chip's value is right, of the stacks
  whose count is right (one chip / more);
- the count's confidence against how often the count is right;
- min(count, values) confidence against the whole stack right: what the edge's pushes are as sure as.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from floorman.datasets.render_cli import parse_size
from floorman.datasets.scene import DetectorClass
from floorman.vision.chips import ChipReading, ChipRecogniser
from floorman.vision.detect_cli import default_model
from floorman.vision.detector import Detector, OnnxDetectorConfig, box_iou, create_detector
from floorman.vision.table_state import TableStateBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chips import draw_frame, exact_calibration  # the benchmarks folder is no package

# The dev samples TOP_RIGHT was measured on (seeds used for nothing else).
DEV_SAMPLES = ("8960,40,3840x2160,seats", "8961,200,3840x2160,seats", "8962,150,mixed,random",
               "8963,100,1280x720,seats")
SCORE_BANDS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
CONFIDENCE_BANDS = (0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.01)
MIN_VISIBLE = 0.9


@dataclass(frozen=True)
class Sample:
    seed: int
    frames: int
    size: tuple[int, int] | None
    scene: str


@dataclass(frozen=True)
class Pair:
    """One rendered stack and the reading of the detector box on it."""

    truth: tuple[int, ...]
    reading: ChipReading
    width: int


def parse_sample(text: str) -> Sample:
    parts = text.split(",")
    if len(parts) != 4:
        raise argparse.ArgumentTypeError(f"expected SEED,FRAMES,SIZE,SCENE, got {text!r}")
    seed, frames, size, scene = parts
    if scene not in ("random", "seats"):
        raise argparse.ArgumentTypeError(f"SCENE must be random or seats, got {scene!r} in {text!r}")
    try:
        return Sample(int(seed), int(frames), None if size == "mixed" else parse_size(size), scene)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"bad sample {text!r}: {error}") from error


def read_sample(sample: Sample, detector: Detector) -> list[Pair]:
    pairs: list[Pair] = []
    for index in range(sample.frames):
        scene, camera, result = draw_frame(sample.seed, index, size=sample.size, seats=sample.scene == "seats")
        builder = TableStateBuilder(detector, scene.layout, exact_calibration(camera, scene.layout), scene.chipset,
                                    None, None, camera_height_mm=float(camera.eye[2]))
        recogniser: ChipRecogniser = builder.chips
        detections = detector.detect(result.image)
        boxes = detections.xyxy[detections.class_id == DetectorClass.CHIP.value].astype(np.float64)
        readings = recogniser.read_frame(result.image, [tuple(float(v) for v in b) for b in boxes])
        for o in result.objects:
            if o.cls != DetectorClass.CHIP or not o.chips or o.visible_fraction < MIN_VISIBLE or not len(boxes):
                continue
            overlaps = box_iou(np.asarray(o.box, dtype=np.float64), boxes)[0]
            if float(overlaps.max()) >= 0.5:
                pairs.append(Pair(tuple(o.chips), readings[int(np.argmax(overlaps))], camera.width))
    return pairs


def lower_bound(right: int, total: int, z: float = 1.645) -> float:
    """Wilson's 90 % lower bound on a share."""
    share = right / total
    spread = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total))
    return (share + z * z / (2 * total) - spread) / (1 + z * z / total)


def table(title: str, pairs: list[Pair], *, value: str, right: str, bands: tuple[float, ...]) -> None:
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for pair in pairs:
        score = _value(pair, value)
        band = next(k for k in range(len(bands) - 1) if score < bands[k + 1] or k == len(bands) - 2)
        counts[band][0] += int(_right(pair, right))
        counts[band][1] += 1
    print(f"  {title}")
    for band in sorted(counts):
        ok, total = counts[band]
        print(f"    {bands[band]:.2f}-{min(bands[band + 1], 1.0):.2f}: {ok:5d} / {total:5d} right = "
              f"{100.0 * ok / total:5.1f} % (>= {100.0 * lower_bound(ok, total):5.1f} %)")


def _value(pair: Pair, name: str) -> float:
    reading = pair.reading
    return {"top": reading.top_score, "values": reading.confidence, "count": reading.count_confidence,
            "stack": min(reading.confidence, reading.count_confidence)}[name]


def _right(pair: Pair, name: str) -> bool:
    read = pair.reading.denominations
    return {"top": read[-1] == pair.truth[-1], "values": read == pair.truth, "count": len(read) == len(pair.truth),
            "stack": read == pair.truth}[name]


def report(title: str, pairs: list[Pair]) -> None:
    print(f"{title}: {len(pairs)} stacks")
    counted = [p for p in pairs if len(p.reading.denominations) == len(p.truth)]
    table("top's value by its colour match score (top_score)", pairs, value="top", right="top", bands=SCORE_BANDS)
    table("every value, count right, one chip, by the values' confidence", [p for p in counted if len(p.truth) == 1],
          value="values", right="values", bands=CONFIDENCE_BANDS)
    table("every value, count right, more chips, by the values' confidence",
          [p for p in counted if len(p.truth) > 1], value="values", right="values", bands=CONFIDENCE_BANDS)
    table("count by the count's confidence", pairs, value="count", right="count", bands=CONFIDENCE_BANDS)
    table("whole stack by min(count, values) confidence", pairs, value="stack", right="stack",
          bands=CONFIDENCE_BANDS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=parse_sample, action="append",
                        help="SEED,FRAMES,SIZE,SCENE (repeatable; default: the dev samples of TOP_RIGHT)")
    parser.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8 model)")
    args = parser.parse_args()
    samples = args.sample or [parse_sample(s) for s in DEV_SAMPLES]
    detector = create_detector(OnnxDetectorConfig(model=args.model or default_model()))
    started = time.perf_counter()
    pairs: list[Pair] = []
    for sample in samples:
        pairs += read_sample(sample, detector)
    names = ", ".join(f"{s.seed} ({s.frames} {s.scene} frames, "
                      f"{'mixed sizes' if s.size is None else f'{s.size[0]}x{s.size[1]}'})" for s in samples)
    print(f"chip confidences on the detector's boxes, camera height given; samples {names}; "
          f"{time.perf_counter() - started:.0f} s")
    report("all frames", pairs)
    report("frames 1280 px wide or less", [p for p in pairs if p.width <= 1280])
    report("frames wider than 1280 px", [p for p in pairs if p.width > 1280])
    return 0


if __name__ == "__main__":
    sys.exit(main())
