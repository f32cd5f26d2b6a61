"""Chip stacks as the edge reads them from a scenario's video, against the rendered truth of each frame.

    .venv/bin/python benchmarks/chips_video.py DIR [DIR ...] --vision cam.yaml [--states NAME] [--every 15]
                                               [--min-visible 0.95] [--match-mm 20]

DIR is a rendered scenario folder (`floorman datasets scenario NAME --out DIR`: video.mp4, frames.jsonl, and the
calibration `floorman calibrate DIR/calibration.png --out DIR/cam.yaml` wrote). The table states are the edge's
vision on the video (`floorman.evaluation.derivation.vision_states`: gated detector, recognisers, tracker); with
--states they are read from DIR/NAME when it exists, whatever vision code made it (as `python -m
floorman.evaluation --states NAME --stale-states` does), and written there otherwise.

Unlike `benchmarks/chips.py` (random scenes, one frame each) this measures the stacks the rules act on: a seat's
stacks side by side (one per denomination, touching), bets of a few chips, the pot, seen frame after frame with
hands passing. Every --every-th frame, each truth stack at least --min-visible uncovered in a stack, bet or pot zone
is matched to the nearest stack read within --match-mm on the table. Printed per scenario and in all:
- found: truth stacks with a reading there;
- count exact, values exact (every chip's value, bottom to top), among those found;
- counts given confidence >= 0.8 (`ledger_min_confidence`, what the rules accuse on): share of found, exact;
  and, by band of the reading's confidence (the lesser of its count's and its values'), how often the values
  are exact (a calibrated confidence matches its band);
- the same split by zone kind (stack, bet, pot) and for stacks touching another (centres within --touch-mm);
- zone value exact: per frame and zone whose truth stacks are all uncovered, the value read there against the truth.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from floorman.core.frame_truth import FrameTruth, ObjectRecord
from floorman.core.table_state import SeenChips, TableState
from floorman.datasets.scenario import load_scenario
from floorman.datasets.seat_chips import TOUCHING_MM, touching
from floorman.datasets.truth import FRAMES_FILE, read_frames
from floorman.edge.agent import DEFAULT_MODEL
from floorman.evaluation.derivation import vision_states
from floorman.evaluation.states import cached_states, header_for, stale_header

KINDS = ("stack", "bet", "pot")
SURE = 0.8
BANDS = (0.8, 0.5, 0.2, 0.0)  # confidence bands (their lower ends): how often each band's values are exact


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, key: str, ok: bool) -> None:
        self.counts[f"{key}:n"] += 1
        self.counts[f"{key}:ok"] += int(ok)

    def merge(self, other: Tally) -> None:
        self.counts.update(other.counts)

    def rate(self, key: str) -> str:
        n = self.counts[f"{key}:n"]
        return "-" if n == 0 else f"{100.0 * self.counts[f'{key}:ok'] / n:5.1f} % of {n}"


def zone_kind(zone: str | None) -> str | None:
    head = (zone or "").split("_")[0]
    return head if head in KINDS else None


def stack_value(chips: Iterable[int]) -> int:
    return sum(chips)


def nearest(record: ObjectRecord, seen: list[SeenChips], *, mm: float) -> SeenChips | None:
    best, best_d = None, mm
    for chips in seen:
        if chips.position_mm is None:
            continue
        d = math.dist(chips.position_mm, record.position_mm)
        if d <= best_d:
            best, best_d = chips, d
    return best


def score_frame(tally: Tally, truth: FrameTruth, state: TableState, args: argparse.Namespace) -> None:
    stacks = [o for o in truth.objects if o.cls == "chip" and o.chips and zone_kind(o.zone) is not None]
    touches = touching([o.position_mm for o in stacks], mm=args.touch_mm)
    for record, touch in zip(stacks, touches, strict=True):
        if record.visible_fraction < args.min_visible:
            continue
        kind = zone_kind(record.zone)
        groups = ["all", f"zone {kind}"]
        if touch:
            groups.append("touching")
        reading = nearest(record, list(state.chips), mm=args.match_mm)
        for group in groups:
            tally.add(f"{group}|found", reading is not None)
            if reading is None:
                continue
            count_ok = len(reading.denominations) == record.count
            tally.add(f"{group}|count", count_ok)
            tally.add(f"{group}|values", tuple(reading.denominations) == tuple(record.chips or ()))
            confidence = min(reading.count_confidence, reading.denomination_confidence)
            sure = confidence >= SURE
            tally.add(f"{group}|sure share", sure)
            if sure:
                tally.add(f"{group}|sure exact", count_ok)
            band = next(b for b in BANDS if confidence >= b)
            tally.add(f"{group}|values at >= {band:.1f}", tuple(reading.denominations) == tuple(record.chips or ()))
    score_zones(tally, stacks, state, args)


def score_zones(tally: Tally, stacks: list[ObjectRecord], state: TableState, args: argparse.Namespace) -> None:
    truth_value: Counter[str] = Counter()
    covered: set[str] = set()
    for record in stacks:
        zone = str(record.zone)
        truth_value[zone] += stack_value(record.chips or ())
        if record.visible_fraction < args.min_visible:
            covered.add(zone)
    read_value: Counter[str] = Counter()
    for chips in state.chips:
        if zone_kind(chips.zone) is not None:
            read_value[str(chips.zone)] += stack_value(chips.denominations)
    for zone in set(truth_value) | set(read_value):
        if zone in covered:
            continue
        tally.add("all|zone value", read_value[zone] == truth_value[zone])
        tally.add(f"zone {zone_kind(zone)}|zone value", read_value[zone] == truth_value[zone])


def states_of(folder: Path, args: argparse.Namespace) -> Iterable[TableState]:
    layout = load_scenario(folder / "scenario.yaml").spec.layout
    calibration = folder / args.vision
    made = vision_states(folder, layout_name=layout, calibration=calibration, model=args.model)
    if args.states is None:
        return made
    header = header_for(folder / "video.mp4", model=args.model or DEFAULT_MODEL, calibration=calibration)
    header = stale_header(folder / args.states, expected=header) or header
    return cached_states(folder / args.states, header=header, make=made)


def score_folder(folder: Path, args: argparse.Namespace) -> Tally:
    truths = {f.frame: f for f in read_frames(folder / FRAMES_FILE)}
    tally = Tally()
    for state in states_of(folder, args):
        truth = truths.get(state.frame)
        if truth is not None and state.frame % args.every == 0:
            score_frame(tally, truth, state, args)
    return tally


def write_table(name: str, tally: Tally) -> None:
    sys.stdout.write(f"{name}\n")
    for group in ("all", *(f"zone {k}" for k in KINDS), "touching"):
        if not tally.counts[f"{group}|found:n"]:
            continue
        cells = [f"{what} {tally.rate(f'{group}|{what}')}" for what in
                 ("found", "count", "values", "sure share", "sure exact", "zone value",
                  *(f"values at >= {b:.1f}" for b in BANDS))
                 if tally.counts[f"{group}|{what}:n"]]
        sys.stdout.write(f"  {group:10s} " + "; ".join(cells) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="rendered scenario folders")
    parser.add_argument("--vision", required=True, metavar="CALIB", help="calibration file in each folder")
    parser.add_argument("--model", type=Path, help="ONNX detector (default: the shipped INT8)")
    parser.add_argument("--states", help="table states file in each folder: read back (whatever vision code made "
                        "it) or made and kept")
    parser.add_argument("--every", type=int, default=15, help="score every N-th frame")
    parser.add_argument("--min-visible", type=float, default=0.95, help="truth stacks at least this uncovered")
    parser.add_argument("--match-mm", type=float, default=20.0, help="reading within this of the truth stack")
    parser.add_argument("--touch-mm", type=float, default=TOUCHING_MM, help="stacks whose centres are this close touch")
    args = parser.parse_args()
    if args.every < 1:
        parser.error(f"--every: expected a positive number of frames, got {args.every}")
    total = Tally()
    for folder in args.folders:
        if not (folder / FRAMES_FILE).is_file():
            parser.error(f"{folder}: expected a rendered scenario folder with {FRAMES_FILE}")
        tally = score_folder(folder, args)
        write_table(folder.name, tally)
        total.merge(tally)
    write_table(f"all {len(args.folders)} scenarios", total)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
