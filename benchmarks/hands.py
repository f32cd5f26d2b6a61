"""Where the vision places hands on the table, against the rendered hand's middle, by camera.

    .venv/bin/python benchmarks/hands.py DIR... --states NAME [--calib video_sets_cam.yaml] [--per-video]

DIR is a rendered scenario folder holding a video's stored table states (`DIR/NAME`, as `benchmarks/video_sets.py
--states NAME` or `python -m floorman.evaluation --vision CALIB --states NAME` keep them) and the calibration they
were made with (`DIR/CALIB`). Each hand box of the states is placed again from its box, three ways, and matched to the
nearest truth hand of its frame (`frames.jsonl`: the palm's middle, at least 90 % in view, within 150 mm):
- `shipped`: `vision.table_state._hand_point`, the box's centre taken `HAND_HEIGHT_MM` above the felt and moved
  `HAND_TOWARDS_TIPS` of the way to the edge nearest the table centre (session 43);
- `felt, 1/4 to tips`: the box's centre on the felt, a quarter of the way to that edge (sessions 6-42);
- `felt, centre`: the box's centre on the felt.
It prints, per camera kind (the calibration's tilt from vertical) and with `--per-video` per folder, the hands
matched, the median distance (mm) and the mean offset (x, y mm) of each. A hand lies tens of millimetres above the
felt: the felt's homography alone puts it beyond itself, away from the camera (session 42 lost seat 3's taps, made
over its cards from a camera ~50 degrees from vertical, to its stack zone).
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from floorman.core.frame_truth import read_frames
from floorman.core.geometry import FloatArray
from floorman.evaluation.states import read_states_as_made
from floorman.vision.calibration import Calibration
from floorman.vision.chips_geometry import TableCamera
from floorman.vision.table_state import _hand_point, table_camera

MATCH_MM = 150.0
Placer = Callable[[TableCamera, FloatArray], FloatArray]
PLACERS: dict[str, Placer] = {
    "shipped": lambda camera, box: _hand_point(camera, box),
    "felt, 1/4 to tips": lambda camera, box: _hand_point(camera, box, height_mm=0.0, towards_tips=0.25),
    "felt, centre": lambda camera, box: _hand_point(camera, box, height_mm=0.0, towards_tips=0.0),
}


def camera_kind(tilt_deg: float) -> str:
    if tilt_deg < 10.0:
        return "straight down (< 10 deg)"
    return "tilted 10-40 deg" if tilt_deg < 40.0 else "tilted >= 40 deg"


def offsets(folder: Path, *, states: str, calib: str) -> tuple[float, dict[str, list[tuple[float, float]]]]:
    """The calibration's tilt and, per placer, each matched hand's offset from the truth (mm)."""
    camera = table_camera(Calibration.load(folder / calib))
    truth = {f.frame: f for f in read_frames(folder / "frames.jsonl")}
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in PLACERS}
    for state in read_states_as_made(folder / states):
        frame = truth.get(state.frame)
        if frame is None:
            continue
        palms = [o.position_mm for o in frame.objects if o.cls == "hand" and o.visible_fraction >= 0.9]
        for hand in state.hands:
            box = np.asarray(hand.box, dtype=np.float64)
            shipped = PLACERS["shipped"](camera, box)
            palm = min(palms, key=lambda p: math.dist(p[:2], shipped), default=None)
            if palm is None or math.dist(palm[:2], shipped) > MATCH_MM:
                continue
            for name, place in PLACERS.items():
                point = place(camera, box)
                found[name].append((float(point[0] - palm[0]), float(point[1] - palm[1])))
    return camera.tilt_deg, found


def _row(label: str, found: dict[str, list[tuple[float, float]]]) -> str:
    cells = []
    for name in PLACERS:
        errors = np.asarray(found[name]).reshape(-1, 2)
        if not len(errors):
            cells.append("-")
            continue
        median = float(np.median(np.hypot(errors[:, 0], errors[:, 1])))
        mean_x, mean_y = (float(v) for v in errors.mean(axis=0))
        cells.append(f"{median:5.1f} ({mean_x:+5.1f}, {mean_y:+5.1f})")
    return f"| {label} | {len(found['shipped'])} | " + " | ".join(cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="rendered scenario folders with stored states")
    parser.add_argument("--states", required=True, metavar="NAME", help="the stored table states' file name in each")
    parser.add_argument("--calib", default="video_sets_cam.yaml", help="the calibration's file name in each "
                        "(default: the one benchmarks/video_sets.py makes)")
    parser.add_argument("--per-video", action="store_true", help="a row per folder too")
    args = parser.parse_args()
    groups: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: {name: [] for name in PLACERS})
    header = "| camera | hands | " + " | ".join(f"{name}: median mm (mean x, y)" for name in PLACERS) + " |"
    rule = "|---|---|" + "---|" * len(PLACERS)
    rows = []
    missing = [str(folder / name) for folder in args.folders for name in (args.states, args.calib, "frames.jsonl")
               if not (folder / name).is_file()]
    if missing:
        parser.error(f"no such file: {', '.join(missing)}")
    for folder in args.folders:
        tilt, found = offsets(folder, states=args.states, calib=args.calib)
        for name, values in found.items():
            groups[camera_kind(tilt)][name].extend(values)
        if args.per_video:
            rows.append(_row(f"{folder.name} ({tilt:.0f} deg)", found))
    print(header)
    print(rule)
    for line in rows:
        print(line)
    for kind, found in sorted(groups.items()):
        print(_row(f"**{kind}**", found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
