"""The from-video evaluation sets of the README, in one command: render (once, into a cache), calibrate, derive the
events from the edge's vision on each video and score them against the truth.

    .venv/bin/python benchmarks/video_sets.py [--sets held_out,A,B,C] [--cache runs/video_sets]
                                              [--measured-height] [--model M] [--states NAME [--stale-states]]
                                              [--rulebook R] [--events] [--hands] [--names]

Each set is a list of bundled scenarios rendered at one frame size, with their own camera or one set for the whole
set (`SETS`: the sets the README's from-video figures are given for; `--sets all` runs every one). A scenario is
rendered once per size and camera into CACHE/NAME_WxH[_CAMERA]/ (`floorman datasets scenario`), calibrated on its
calibration frame (`floorman calibrate`, the layout's ArUco markers) and evaluated with `--vision` and `--states`
(`python -m floorman.evaluation`): the vision's table states are kept in the folder and read back while the video,
detector, calibration and vision code are the same, so a second run re-scores the derivation in seconds.
`--measured-height` calibrates with the camera's height above the felt as an installer measures it with a tape
(`floorman calibrate --camera-height`; the scenario camera's own height), into a calibration file of its own.
The two-camera sets (`pair1080`, `pair4k`, session 25) render each scenario from a second camera too (facing the
first across the table), calibrate it alike, and derive from both fused (`evaluate_scenario(views=)`, as `floorman
edge --view`); their fused states are kept as NAME_fused.jsonl (session 26; the header names both cameras' videos
and calibrations). `pair4k_fresh` (session 26) holds two scenarios no choice about fusion was made on, `dev_pair4k`
the two the choices were made on.
Printed per set: alerts expected and met, alerts raised that were not expected (false), and the pushes, dealt cards
and taps derived, matched within the tolerance, against the truth (recall and precision). With `--hands`, a second
table: the vision's hand boxes, those on no rendered hand (IoU < 0.3 with each of the frame's), and the rendered
hands no box found (IoU >= 0.3), from the stored states. With `--names` (session 20), a table of the face-up cards
dealt in the truth: named right, named wrong (each listed, truth -> read), dealt unread, not derived (each matched to a
derived face-up deal to the same zone within the tolerance, whatever its name; `evaluation.derivation.compare_names`).
Rendering and the vision take minutes per scenario at
1280x720 on the 2-core machine, tens of minutes at 3840x2160.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from floorman.cli import main as floorman
from floorman.datasets.scenario import load_scenario, resolve_scenario_path
from floorman.datasets.timeline import scenario_camera
from floorman.datasets.truth import FRAMES_FILE, read_frames
from floorman.evaluation.derivation import NameScore, ScenarioScore, TypeScore, evaluate_scenario
from floorman.evaluation.states import read_states_as_made
from floorman.vision.detector import box_iou

# A 4K camera 1.7 m up and 0.9 m behind the table's centre, looking at it (~28 degrees from vertical): the README's
# "Where to put the camera".
TILTED_4K = {"preset": "overhead", "eye": [0, -900, 1700], "target": [0, 0, 0], "hfov_deg": 84,
             "size": [3840, 2160]}

# The scenarios' own tilted preset at 1280x720 (`datasets.timeline.scenario_camera`): 1.25 m up, 1.5 m behind the
# dealer's edge, ~50 degrees from vertical at the board; four of the 1280x720 sets' scenarios are filmed so.
TILTED_720 = {"preset": "tilted", "size": [1280, 720]}

# The camera facing TILTED_4K across the table (session 25: the two fused, README "Two cameras facing each other").
FACING_4K = {**TILTED_4K, "eye": [0, 900, 1700]}
TILTED_1080 = {**TILTED_4K, "size": [1920, 1080]}
FACING_1080 = {**FACING_4K, "size": [1920, 1080]}

@dataclass(frozen=True)
class VideoSet:
    """Scenarios rendered at `size`, each with its own camera or with `camera` (a scenario `camera:` block)."""

    about: str
    size: tuple[int, int]
    scenarios: tuple[str, ...]
    camera: dict[str, object] | None = None
    camera_name: str = ""
    view: dict[str, object] | None = None  # a second camera, fused with the first (`evaluate_scenario(views=)`)
    view_name: str = ""


SETS = {
    "held_out": VideoSet("held out since session 5", (1280, 720),
                         ("clean_hand_02", "premature_board_01", "splash_01", "string_bet_01")),
    "A": VideoSet("fresh set A of session 7", (1280, 720),
                  ("burnless_board_01", "clean_hand_03", "hidden_chips_covered_02", "out_of_turn_01",
                   "rabbit_hunt_02")),
    "B": VideoSet("fresh set B of session 7", (1280, 720),
                  ("burnless_board_02", "hidden_chips_removed_01", "out_of_turn_02", "premature_board_02",
                   "splash_02")),
    "C": VideoSet("set C of session 8", (1280, 720), ("hidden_chips_removed_02", "pocket_chips_02")),
    "D": VideoSet("set D of session 16 (turn order whatever the amounts: checks on every street)", (1280, 720),
                  ("clean_hand_04", "out_of_turn_03", "premature_board_03")),
    "E": VideoSet("set E of session 16 (checks out of turn and in turn, after the tap's own sureness was let go)",
                  (1280, 720), ("clean_hand_05", "out_of_turn_04")),
    "tilted_E": VideoSet("3840x2160 tilted ~28 degrees, set E (fresh in session 16)", (3840, 2160),
                         ("clean_hand_05", "out_of_turn_04"), TILTED_4K, "tilt28"),
    "4k": VideoSet("3840x2160, the scenarios' own cameras", (3840, 2160), ("pocket_chips_01", "string_bet_01")),
    "tilted_pair": VideoSet("3840x2160 tilted ~28 degrees (looked at in session 11)", (3840, 2160),
                            ("pocket_chips_01", "string_bet_01"), TILTED_4K, "tilt28"),
    "tilted_fresh": VideoSet("3840x2160 tilted ~28 degrees (fresh in session 11)", (3840, 2160),
                             ("out_of_turn_01", "splash_01", "string_bet_02"), TILTED_4K, "tilt28"),
    "tilted_fresh12": VideoSet("3840x2160 tilted ~28 degrees (fresh in session 12)", (3840, 2160), ("splash_02",),
                               TILTED_4K, "tilt28"),
    "tilted720": VideoSet("1280x720 from the scenarios' tilted preset (behind the dealer, ~50 degrees from vertical; "
                          "fresh in session 19: cards foreshortened past square, read on the table's plane)",
                          (1280, 720), ("clean_hand_04", "premature_board_02", "splash_01"), TILTED_720, "tilted"),
    "fresh1080": VideoSet("1920x1080, the scenarios' own cameras (fresh in session 42: that session's derivation "
                          "changes measured on it once, before and after)", (1920, 1080),
                          ("burnless_board_02", "clean_hand_05", "hidden_chips_removed_01", "out_of_turn_03",
                           "premature_board_03")),
    "bet_sizing": VideoSet("3840x2160 tilted ~28 degrees: bet-sizing errors, tda2024 (fresh in session 43: an "
                           "under-raise by ten 100s, A3, and an under-call, A11)", (3840, 2160),
                           ("under_raise_01", "under_call_01"), TILTED_4K, "tilt28"),
    "bet_sizing720": VideoSet("1280x720, the scenarios' own cameras: bet-sizing errors, tda2024 (fresh in session "
                              "43)", (1280, 720), ("under_raise_01", "under_call_01")),
    "pair1080": VideoSet("1920x1080 from two cameras facing each other, ~28 degrees, fused (session 25)",
                         (1920, 1080), ("string_bet_01",), TILTED_1080, "pairA", FACING_1080, "pairB"),
    "pair4k": VideoSet("3840x2160 from two cameras facing each other, ~28 degrees, fused (session 25)",
                       (3840, 2160), ("pocket_chips_01", "string_bet_01"), TILTED_4K, "pairA", FACING_4K, "pairB"),
    "pair4k_fresh": VideoSet("3840x2160 from two cameras facing each other, fused: fresh scenarios for them in "
                             "session 26", (3840, 2160), ("pocket_chips_02", "string_bet_02"), TILTED_4K, "pairA",
                             FACING_4K, "pairB"),
    "dev_pair4k": VideoSet("3840x2160 from two cameras facing each other, fused: the dev scenarios (session 26: for "
                           "choices made on video, not an evaluation set)", (3840, 2160),
                           ("clean_hand_01", "rabbit_hunt_01"), TILTED_4K, "pairA", FACING_4K, "pairB"),
    "dev_tilted": VideoSet("3840x2160 tilted ~28 degrees, the dev scenarios (session 15: for choices made on video, "
                           "not an evaluation set)", (3840, 2160), ("clean_hand_01", "rabbit_hunt_01"),
                           TILTED_4K, "tilt28"),
}
EVENT_TYPES = ("chips_pushed", "card_dealt", "tap")
STATES = "video_sets_states.jsonl"


@dataclass
class SetScore:
    expected: int = 0
    met: int = 0
    false: int = 0
    events: dict[str, TypeScore] = field(default_factory=dict)
    names: NameScore = field(default_factory=NameScore)

    def add(self, score: ScenarioScore) -> None:
        self.expected += len(score.alerts.outcomes)
        self.met += sum(1 for o in score.alerts.outcomes if o.met_by is not None)
        self.false += len(score.alerts.unexpected)
        for kind in EVENT_TYPES:
            self.events.setdefault(kind, TypeScore()).add(score.events.get(kind, TypeScore()))
        self.names.add(score.names)


@dataclass
class HandScore:
    boxes: int = 0  # the vision's hand boxes
    false: int = 0  # on no rendered hand
    rendered: int = 0  # rendered hands
    missed: int = 0  # rendered hands no box found

    def add(self, folder: Path, states: str, *, min_iou: float = 0.3) -> None:
        """Count the hands of the scenario's stored states against its truth frames."""
        truth = {f.frame: [o.box for o in f.objects if o.cls == "hand"] for f in read_frames(folder / FRAMES_FILE)}
        for state in read_states_as_made(folder / states):
            seen = np.array([h.box for h in state.hands], dtype=np.float32).reshape(-1, 4)
            shown = np.array(truth.get(state.frame, []), dtype=np.float32).reshape(-1, 4)
            self.boxes += len(seen)
            self.rendered += len(shown)
            if not len(shown) or not len(seen):
                self.false += len(seen)
                self.missed += len(shown)
                continue
            overlaps = np.stack([box_iou(box, shown)[0] for box in seen])  # seen x shown
            self.false += int((overlaps.max(axis=1) < min_iou).sum())
            self.missed += int((overlaps.max(axis=0) < min_iou).sum())


def rendered(name: str, video_set: VideoSet, cache: Path, *, view: bool = False) -> Path:
    """The scenario's folder in the cache (`view`: as the set's second camera films it), rendered first if its
    video is not there."""
    width, height = video_set.size
    camera, camera_name = (video_set.view, video_set.view_name) if view else (video_set.camera, video_set.camera_name)
    folder = cache / f"{name}_{width}x{height}{'_' + camera_name if camera_name else ''}"
    if (folder / "video.mp4").is_file() and (folder / "scenario.yaml").is_file():
        return folder
    spec = resolve_scenario_path(name)
    if camera is not None:
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        data["camera"] = camera
        spec = cache / "specs" / f"{name}_{camera_name}.yaml"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    _run(["datasets", "scenario", str(spec), "--out", str(folder), "--size", f"{width}x{height}", "--overwrite"])
    return folder


def calibrated(folder: Path, *, measured_height: bool) -> Path:
    """The folder's calibration file (made from its calibration frame if missing)."""
    name = "video_sets_cam_height.yaml" if measured_height else "video_sets_cam.yaml"
    if not (folder / name).is_file():
        args = ["calibrate", str(folder / "calibration.png"), "--out", str(folder / name)]
        if measured_height:
            loaded = load_scenario(folder / "scenario.yaml")
            args += ["--camera-height", f"{float(scenario_camera(loaded.spec).eye[2]):.0f}"]
        _run(args)
    return folder / name


def _run(args: list[str]) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = floorman(args)
    if code != 0:
        raise SystemExit(f"floorman {' '.join(args)} failed ({code}):\n{out.getvalue()}")


def _names(names: NameScore) -> str:
    """"R right, W wrong (4S -> 4C, ...), U unread of N" for a scenario's `--events` line."""
    wrong = f" ({', '.join(names.misread)})" if names.misread else ""
    return f"{names.right} right, {names.wrong} wrong{wrong}, {names.unread} unread of {names.truth}"


def _rate(value: TypeScore) -> str:
    return f"{value.matched}/{value.truth} (P {value.precision:.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="held_out,A,B,C",
                        help=f"comma-separated, of {', '.join(SETS)}, or 'all' (default: the 1280x720 ones)")
    parser.add_argument("--cache", type=Path, default=Path("runs/video_sets"),
                        help="rendered scenarios, calibrations and stored states (kept between runs)")
    parser.add_argument("--measured-height", action="store_true",
                        help="calibrate with the camera's height above the felt (as measured with a tape)")
    parser.add_argument("--model", type=Path, help="the ONNX detector (default: the shipped INT8)")
    parser.add_argument("--states", default=STATES, help=f"the stored states' file name in each scenario folder "
                        f"(default {STATES}; one per detector compared keeps each one's states)")
    parser.add_argument("--stale-states", action="store_true", help="read the stored states back even when made "
                        "by another detector, calibration or vision code (same video): to re-score a change to the "
                        "derivation or the rules alone")
    parser.add_argument("--rulebook", help="check every scenario under this rulebook instead of its own (e.g. ggc, "
                        "which checks C1 and E2 where tda2024 does not); the expected alerts are those it checks")
    parser.add_argument("--events", action="store_true", help="print each scenario's line too")
    parser.add_argument("--hands", action="store_true", help="count the vision's hand boxes against the rendered "
                        "hands too (not for the two-camera sets)")
    parser.add_argument("--names", action="store_true", help="count the face-up cards dealt named right, named "
                        "wrong and unread too (matched by zone and time, whatever the name)")
    args = parser.parse_args()
    names = list(SETS) if args.sets == "all" else [s for s in args.sets.split(",") if s]
    unknown = [n for n in names if n not in SETS]
    if unknown:
        parser.error(f"--sets: unknown set(s) {', '.join(unknown)}; expected some of {', '.join(SETS)} or 'all'")
    args.cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        video_set = SETS[name]
        started = time.perf_counter()
        total, hands = SetScore(), HandScore()
        for scenario in video_set.scenarios:
            folder = rendered(scenario, video_set, args.cache)
            calibration = calibrated(folder, measured_height=args.measured_height)
            states = args.states.replace(".jsonl", "_height.jsonl") if args.measured_height else args.states
            views = []
            if video_set.view is not None:  # fused with the second camera's: the fused states kept apart
                other = rendered(scenario, video_set, args.cache, view=True)
                views.append((other, calibrated(other, measured_height=args.measured_height)))
                states = states.replace(".jsonl", "_fused.jsonl")
            score = evaluate_scenario(folder, calibration=calibration, model=args.model, states=states,
                                      stale_states=args.stale_states, rulebook=args.rulebook, views=views)
            total.add(score)
            if args.hands and not views:
                hands.add(folder, states)
            if args.events:
                met = sum(1 for o in score.alerts.outcomes if o.met_by is not None)
                sys.stdout.write(f"  {name}: {scenario}: alerts {met}/{len(score.alerts.outcomes)}, "
                                 f"{len(score.alerts.unexpected)} false; "
                                 + ", ".join(f"{k} {_rate(score.events.get(k, TypeScore()))}" for k in EVENT_TYPES)
                                 + (f"; names {_names(score.names)}" if args.names else "") + "\n")
        rows.append((name, video_set, total, hands, time.perf_counter() - started))
    height = ", camera height measured" if args.measured_height else ""
    book = f", rulebook {args.rulebook}" if args.rulebook else ""
    sys.stdout.write(f"from video ({args.model or 'shipped INT8 detector'}{height}{book}):\n")
    sys.stdout.write("| set | scenarios | alerts met / expected | false alerts | pushes matched | cards dealt | taps "
                     "| s |\n|---|---|---|---|---|---|---|---|\n")
    for name, video_set, total, _, seconds in rows:
        size = f"{video_set.size[0]}x{video_set.size[1]}"
        sys.stdout.write(f"| {name} ({video_set.about}, {size}) | {len(video_set.scenarios)} | {total.met} / "
                         f"{total.expected} | {total.false} | "
                         + " | ".join(_rate(total.events[k]) for k in EVENT_TYPES) + f" | {seconds:.0f} |\n")
    if args.hands:
        sys.stdout.write("| set | hand boxes | on no rendered hand | rendered hands | with no box |\n"
                         "|---|---|---|---|---|\n")
        for name, _, _, hand, _ in rows:
            sys.stdout.write(f"| {name} | {hand.boxes} | {hand.false} | {hand.rendered} | {hand.missed} |\n")
    if args.names:
        sys.stdout.write("| set | face-up cards dealt | named right | named wrong | unread | not derived "
                         "| wrong ones |\n|---|---|---|---|---|---|---|\n")
        for name, _, total, _, _ in rows:
            n = total.names
            sys.stdout.write(f"| {name} | {n.truth} | {n.right} | {n.wrong} | {n.unread} | {n.missed} | "
                             f"{', '.join(n.misread) or '-'} |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
