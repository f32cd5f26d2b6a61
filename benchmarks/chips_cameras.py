"""Two cameras facing each other against one straight down: stack counts, zone values and cards, fused in table mm.

    .venv/bin/python benchmarks/chips_cameras.py [--frames 30] [--seed 31000] [--size 3840x2160] [--height 1700]
                                                 [--back 900] [--scene both|random|seats] [--model M] [--no-detector]

Each frame is a random casino scene (`datasets.random_sample`, drawn from `SeedSequence(seed, spawn_key=(i,))`; with
`--scene both` every other frame has the seats' stacks laid out side by side as the scenario videos lay them,
`seat_chips`), rendered with camera effects from three cameras of --size:
- `overhead`: straight down over the table's centre, --height mm up (the scenarios' `overhead` rig);
- `A` and `B`: --height mm up and --back mm behind each long side of the table, looking at its centre (about 28
  degrees from vertical at 1700 / 900: README "Where to put the camera"); each sees a side of every stack on the
  table, the far ones best;
- `A+B`: A's and B's states fused in table mm (`vision.fusion.fuse_states`: one stack's count from both cameras'
  evidence and the height of its top where both cameras' rays through it cross (`--no-top`: without); its feet
  matched along each camera's line of sight, or, `--no-sight`, within 20 mm, and no top triangulated).
Each camera is calibrated exactly (four table points projected by the simulator's camera) with its height given
(`floorman calibrate --camera-height`), and read by `TableStateBuilder` with the shipped card recogniser, on truth
boxes and on the detector's. The states are scored against the scene, in table mm (the same for every camera):
- stacks: every chip stack on the felt that some camera sees >= 90 % uncovered; a state's stack is matched to
  it when its foot lies within 25 mm (nearest first); count exact, stack exact (every value), the share counted
  with confidence >= 0.8 and how often those are exact; unmatched truth stacks count as wrong (missed); and the
  share of a state's stacks that lie where no chip object does (a stack seen twice, or nothing, within 25 mm);
- zone value exact: per seat zone (stack_<s>, bet_<s>) and the pot holding chips in truth or in the state;
- cards: face-up cards >= 40 px wide and < 30 % covered in some camera's frame, matched within 30 mm: right,
  wrong or unread (a card no camera saw so is left out).
Use seeds never used for anything else to measure. `--write DIR` also writes the frames and the cameras'
calibrations, to try `floorman detect --view` on.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from floorman.core.table_state import SeenChips, TableState
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import ObjectTruth, Renderer
from floorman.datasets.render_cli import parse_size
from floorman.datasets.render_dataset import TRAINING_OPTIONS
from floorman.datasets.scene import DetectorClass, Scene
from floorman.datasets.seat_chips import seat_chips
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_geometry import BOX_SIGMA_PX
from floorman.vision.detections import Detections
from floorman.vision.detector import Detector, OnnxDetectorConfig, create_detector
from floorman.vision.fusion import fuse_states
from floorman.vision.table_state import TableStateBuilder, recognise_card_reader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chips import (  # the benchmarks folder is no package
    SEAT_ZONES,
    Tally,
    TruthNames,
    exact_calibration,
    truth_detections,
)

STACK_MM = 25.0  # a state's stack foot this near a truth stack's is that stack
CARD_MM = 30.0
MIN_VISIBLE = 0.9
CARD_MIN_PX = 40.0
CARD_MAX_COVERED = 0.3
SURE = 0.8
RIGS = ("overhead", "A", "B", "A+B")


def cameras(args: argparse.Namespace) -> dict[str, Camera]:
    size = args.size
    return {"overhead": Camera.look_at(eye=(0.0, 0.0, args.height), target=(0.0, 0.0, 0.0), size=size,
                                       hfov_deg=80.0),
            "A": Camera.look_at(eye=(0.0, -args.back, args.height), target=(0.0, 0.0, 0.0), size=size, hfov_deg=84.0),
            "B": Camera.look_at(eye=(0.0, args.back, args.height), target=(0.0, 0.0, 0.0), size=size, hfov_deg=84.0)}


def read_view(scene: Scene, camera: Camera, name: str, rng: np.random.Generator, detector: Detector | None, *,
              write: Path | None = None) -> tuple[list[ObjectTruth], TableState, tuple[float, float, float]]:
    """One camera's frame of the scene, its state (truth boxes when `detector` is None), and the camera's lens as
    its calibration tells it (what `fuse_states` is given). `write`: the frame's path (JPEG), its calibration
    written beside it as NAME.yaml (with the camera's height: `floorman calibrate --camera-height`)."""
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    calibration = exact_calibration(camera, scene.layout)
    if write is not None:
        cv2.imwrite(str(write), result.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        calibration.model_copy(update={"camera_height_mm": float(camera.eye[2])}).save(write.parent / f"{name}.yaml")
    reader = recognise_card_reader(pixels_to_mm=calibration.pixels_to_mm)
    names = TruthNames() if detector is None else detector
    builder = TableStateBuilder(names, scene.layout, calibration, scene.chipset, reader, None, camera_id=name,
                                camera_height_mm=float(camera.eye[2]))
    if detector is None:
        builder.chips = ChipRecogniser(scene.chipset, camera=builder.chips.camera, box_sigma_px=BOX_SIGMA_PX)
        kept = [o for o in result.objects if o.cls in (DetectorClass.CHIP, DetectorClass.CARD_FACE)
                and o.box[2] > o.box[0] and o.box[3] > o.box[1]]
        detections = Detections(xyxy=np.array([o.box for o in kept], dtype=np.float32).reshape(-1, 4),
                                confidence=np.ones(len(kept), dtype=np.float32),
                                class_id=np.array([o.cls.value for o in kept], dtype=np.int64))
        if not kept:
            detections = truth_detections([])
    else:
        detections = detector.detect(result.image)
    assert builder.chips.camera is not None
    eye = builder.chips.camera.eye
    return result.objects, builder.state_from(result.image, detections, frame_no=0, t=0.0), (eye[0], eye[1], eye[2])


def nearest_pairs(truth: dict[int, tuple[float, float]], seen: list[tuple[float, float] | None],
                  within_mm: float) -> dict[int, int]:
    """Truth id -> index of the seen object matched to it (nearest pairs first, each used once)."""
    pairs = sorted((math.hypot(p[0] - t[0], p[1] - t[1]), tid, i) for tid, t in truth.items()
                   for i, p in enumerate(seen) if p is not None)
    matched: dict[int, int] = {}
    used: set[int] = set()
    for distance, tid, i in pairs:
        if distance <= within_mm and tid not in matched and i not in used:
            matched[tid] = i
            used.add(i)
    return matched


def score(tally: Tally, rig: str, state: TableState, stacks: dict[int, ObjectTruth], cards: dict[int, ObjectTruth],
          zones: dict[str, int], *, placed: dict[int, tuple[float, float]],
          views: dict[str, TableState] | None = None, label: str = "") -> None:
    """Score `state` into `tally` under `rig` (`placed`: where every chip object in any frame lies, in view or
    not); with `views` (the cameras fused), print each stack read wrong."""
    matched = nearest_pairs({k: o.position_mm for k, o in stacks.items()}, [c.position_mm for c in state.chips],
                            STACK_MM)
    for tid, truth in stacks.items():
        seen = state.chips[matched[tid]] if tid in matched else None
        assert truth.chips is not None
        exact = seen is not None and seen.count == len(truth.chips)
        if views is not None and (seen is None or seen.denominations != truth.chips):
            print_stack(f"{label}{rig}", truth, seen, views)
        tally.add(f"{rig}: count exact", exact)
        tally.add(f"{rig}: stack exact", seen is not None and seen.denominations == truth.chips)
        tally.add(f"{rig}: stacks found", seen is not None)
        if seen is not None:
            tally.add(f"{rig}: count confidence >= {SURE} (share)", seen.count_confidence >= SURE)
            if seen.count_confidence >= SURE:
                tally.add(f"{rig}: count exact, confidence >= {SURE}", exact)
    found = set(nearest_pairs(placed, [c.position_mm for c in state.chips], STACK_MM).values())
    for i in range(len(state.chips)):
        tally.add(f"{rig}: stacks read where none is (share)", i not in found)
    predicted = state.zone_values()
    for zone in set(zones) | {z for z in predicted if z.startswith(SEAT_ZONES) or z == "pot"}:
        tally.add(f"{rig}: zone value exact", zones.get(zone, 0) == predicted.get(zone, 0))
    faces = [c for c in state.cards if c.face_up]
    found = nearest_pairs({k: o.position_mm for k, o in cards.items()}, [c.position_mm for c in faces], CARD_MM)
    for tid, truth in cards.items():
        identity = faces[found[tid]].identity if tid in found else None
        tally.add(f"{rig}: cards right", identity == truth.card)
        tally.add(f"{rig}: cards unread or missed", identity is None)


def print_stack(rig: str, truth: ObjectTruth, seen: SeenChips | None, views: dict[str, TableState]) -> None:
    """One stack read wrong by `rig`: the truth, the fused reading, and each camera's nearest reading."""
    def text(s: SeenChips | None) -> str:
        if s is None:
            return "none"
        return (f"{'+'.join(str(v) for v in s.denominations)} (count {s.count_confidence:.2f}, values "
                f"{s.denomination_confidence:.2f}) {s.zone}")

    near = {}
    for name, view in views.items():
        readings = [c for c in view.chips if c.position_mm is not None]
        best = min(readings, key=lambda c: math.dist(c.position_mm or (0.0, 0.0), truth.position_mm), default=None)
        if best is not None and math.dist(best.position_mm or (0.0, 0.0), truth.position_mm) <= STACK_MM:
            near[name] = best
    sys.stdout.write(f"{rig} wrong: {'+'.join(str(v) for v in truth.chips or ())} at ({truth.position_mm[0]:.0f}, "
                     f"{truth.position_mm[1]:.0f}) {truth.zone}: read {text(seen)}; "
                     + "; ".join(f"{name} {text(near.get(name))}" for name in views) + "\n")


def run_frame(index: int, args: argparse.Namespace, rigs: dict[str, Camera], detector: Detector | None,
              tallies: dict[str, Tally]) -> None:
    rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index,)))
    scene, _ = random_sample(rng, size=args.size, style=SceneStyle.CASINO)
    if args.scene == "seats" or (args.scene == "both" and index % 2):
        scene.chips = seat_chips(scene, rng)
    for boxes, found in (("truth boxes", None), ("detector boxes", detector)):
        if boxes == "detector boxes" and detector is None:
            continue
        seen: dict[str, list[ObjectTruth]] = {}
        states: dict[str, TableState] = {}
        view_rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(index, 1)))
        eyes: dict[str, tuple[float, float, float]] = {}
        for name, camera in rigs.items():  # the same effects for truth and detector boxes
            write = args.write / f"{index:03d}_{name}.jpg" if args.write is not None and found is None else None
            seen[name], states[name], eyes[name] = read_view(scene, camera, name, view_rng, found, write=write)
        states["A+B"] = fuse_states([states["A"], states["B"]],
                                    eyes=None if args.no_sight else [eyes["A"], eyes["B"]],
                                    thickness_mm=None if args.no_top else scene.chipset.thickness_mm)
        truth = [o for objects in seen.values() for o in objects]
        stacks = {o.id: o for o in truth if o.cls == DetectorClass.CHIP and o.chips
                  and o.visible_fraction >= MIN_VISIBLE}
        placed = {o.id: o.position_mm for o in truth if o.cls == DetectorClass.CHIP}
        cards = {o.id: o for o in truth if o.cls == DetectorClass.CARD_FACE and o.card
                 and o.visible_fraction >= 1.0 - CARD_MAX_COVERED and o.box[2] - o.box[0] >= CARD_MIN_PX}
        zones: Counter[str] = Counter()
        for stack in scene.chips:
            any_view = next((o for o in truth if o.id == stack.id), None)
            if any_view is not None and any_view.zone is not None and (
                    any_view.zone.startswith(SEAT_ZONES) or any_view.zone == "pot") and stack.z == 0.0:
                zones[any_view.zone] += sum(stack.chips)
        for rig in RIGS:
            views = {name: states[name] for name in ("A", "B")} if args.verbose and rig == "A+B" else None
            score(tallies[boxes], rig, states[rig], stacks, cards, dict(zones), placed=placed, views=views,
                  label=f"{boxes}, ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--seed", type=int, default=31000)
    parser.add_argument("--size", type=parse_size, default=(3840, 2160))
    parser.add_argument("--height", type=float, default=1700.0, help="cameras' height above the felt, mm")
    parser.add_argument("--back", type=float, default=900.0,
                        help="A and B: how far from the table's long axis, mm (behind each long side)")
    parser.add_argument("--scene", choices=("both", "random", "seats"), default="both")
    parser.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8 model)")
    parser.add_argument("--no-detector", action="store_true", help="truth boxes only")
    parser.add_argument("--no-sight", action="store_true",
                        help="fuse without the cameras' places (stacks one when their feet lie within 20 mm)")
    parser.add_argument("--no-top", action="store_true",
                        help="fuse without triangulating the stacks' tops (the cameras' count evidence alone)")
    parser.add_argument("--write", type=Path, metavar="DIR",
                        help="also write each frame as DIR/NNN_{overhead,A,B}.jpg and each camera's calibration as "
                        "DIR/{overhead,A,B}.yaml (for `floorman detect NNN_A.jpg --calib A.yaml --view NNN_B.jpg "
                        "B.yaml`)")
    parser.add_argument("--verbose", action="store_true",
                        help="print each stack the fused cameras read wrong, with each camera's reading")
    args = parser.parse_args()
    detector = None
    if not args.no_detector:
        from floorman.vision.detect_cli import default_model

        detector = create_detector(OnnxDetectorConfig(model=args.model or default_model()))
    rigs = cameras(args)
    if args.write is not None:
        args.write.mkdir(parents=True, exist_ok=True)
    tallies = {"truth boxes": Tally(), "detector boxes": Tally()}
    started = time.perf_counter()
    for index in range(args.frames):
        run_frame(index, args, rigs, detector, tallies)
    out = sys.stdout
    tilt = math.degrees(math.atan2(args.back, args.height))
    out.write(f"two cameras: {args.frames} {args.scene} casino frames of {args.size[0]}x{args.size[1]}, seed "
              f"{args.seed}, cameras {args.height:.0f} mm up (A, B {args.back:.0f} mm behind the long sides, "
              f"{tilt:.0f} deg), camera height given, {time.perf_counter() - started:.0f} s\n")
    out.write("targets: count exact >= 90 %, zone value exact >= 90 %, cards < 30 % covered >= 99 %\n")
    metrics = sorted({key.split(": ", 1)[1] for tally in tallies.values() for key in tally.totals})
    for boxes, tally in tallies.items():
        if not tally.totals:
            continue
        out.write(f"{boxes}:\n")
        out.write(f"  {'':<34}" + "".join(f"{rig:>20}" for rig in RIGS) + "\n")
        for metric in metrics:
            cells = [tally.rate(f"{rig}: {metric}") if f"{rig}: {metric}" in tally.totals else "-" for rig in RIGS]
            out.write(f"  {metric:<34}" + "".join(f"{cell:>20}" for cell in cells) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
